// Kassa dashboard: passkeys (WebAuthn). A form marked data-passkey="register" (the Passkeys page) or
// data-passkey="sign-in" (the sign-in page) asks the server for the ceremony's options (a POST to
// its data-options, which makes a one-time challenge), lets the browser's authenticator answer
// (navigator.credentials.create or .get), puts the answer as JSON into the form's hidden
// `credential` field and sends the form as usual: the server checks it and answers with a page.
(() => {
  const fromBase64url = (text) => {
    const base64 = text
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(text.length / 4) * 4, '=');
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  };
  const toBase64url = (buffer) => {
    const bytes = new Uint8Array(buffer);
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const descriptors = (list) => (list || []).map((item) => ({ ...item, id: fromBase64url(item.id) }));

  /** The server's JSON options → what navigator.credentials wants (ArrayBuffers for the binary fields). */
  const creationOptions = (json) => ({
    ...json,
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    excludeCredentials: descriptors(json.excludeCredentials),
  });
  const requestOptions = (json) => ({ ...json, challenge: fromBase64url(json.challenge), allowCredentials: descriptors(json.allowCredentials) });

  /** The authenticator's answer as the JSON @simplewebauthn/server reads. */
  const answerJson = (credential) => {
    const response = credential.response;
    const common = {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
    };
    if ('attestationObject' in response) {
      return {
        ...common,
        response: {
          clientDataJSON: toBase64url(response.clientDataJSON),
          attestationObject: toBase64url(response.attestationObject),
          transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
        },
      };
    }
    return {
      ...common,
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        authenticatorData: toBase64url(response.authenticatorData),
        signature: toBase64url(response.signature),
        userHandle: response.userHandle ? toBase64url(response.userHandle) : undefined,
      },
    };
  };

  for (const form of document.querySelectorAll('form[data-passkey]')) {
    const kind = form.getAttribute('data-passkey');
    const problem = form.querySelector('[data-passkey-problem]');
    const say = (text) => {
      if (!problem) return;
      problem.textContent = text;
      problem.hidden = false;
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!window.PublicKeyCredential || !navigator.credentials) {
        say('This browser does not support passkeys.');
        return;
      }
      const button = form.querySelector('button[type=submit]');
      if (button) button.disabled = true;
      fetch(form.getAttribute('data-options'), { method: 'POST', credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then((response) => (response.ok ? response.json() : Promise.reject(new Error('The dashboard did not give passkey options; reload the page.'))))
        .then((options) =>
          kind === 'register'
            ? navigator.credentials.create({ publicKey: creationOptions(options) })
            : navigator.credentials.get({ publicKey: requestOptions(options) }),
        )
        .then((credential) => {
          if (!credential) throw new Error('No passkey was chosen.');
          form.querySelector('input[name=credential]').value = JSON.stringify(answerJson(credential));
          form.submit();
        })
        .catch((error) => {
          if (button) button.disabled = false;
          say(error?.name === 'NotAllowedError' ? 'The passkey was not used (cancelled or timed out).' : String(error?.message || error));
        });
    });
  }
})();

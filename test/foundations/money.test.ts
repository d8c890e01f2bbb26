import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addDecimal,
  coinAmountFor,
  compareDecimal,
  decimalPlaces,
  divideDecimal,
  fromBaseUnits,
  isPositiveDecimalString,
  plainDecimal,
  toBaseUnits,
} from '../../src/money.ts';

describe('money', () => {
  it('accepts only positive decimals in the seed pattern', () => {
    for (const refused of ['0', '0.00', '01', '1.', '.5', '1e3', '-1', '', ' 1', '1 ', '+1', '1,5', '0x10', 'NaN', 'Infinity', '00.5']) {
      assert.equal(isPositiveDecimalString(refused), false, refused);
    }
    for (const accepted of ['10.50', '0.000000001', '1', '0.1', '100000000000000000000000']) {
      assert.equal(isPositiveDecimalString(accepted), true, accepted);
    }
    assert.equal(isPositiveDecimalString(1), false);
    assert.equal(isPositiveDecimalString(null), false);
  });

  it('counts the decimal places a value needs', () => {
    assert.equal(decimalPlaces('10'), 0);
    assert.equal(decimalPlaces('10.50'), 1);
    assert.equal(decimalPlaces('1.000'), 0);
    assert.equal(decimalPlaces('0.000001'), 6);
    assert.equal(decimalPlaces('0.000000001'), 9);
    assert.throws(() => decimalPlaces('1e3'), RangeError);
  });

  it('converts to and from base units exactly', () => {
    assert.equal(toBaseUnits('1.5', 9), 1_500_000_000n);
    assert.equal(toBaseUnits('10.50', 6), 10_500_000n);
    assert.equal(toBaseUnits('0.000000001', 9), 1n);
    assert.equal(toBaseUnits('0', 9), 0n);
    assert.equal(toBaseUnits('7', 0), 7n);
    assert.equal(toBaseUnits('1.100000000000', 9), 1_100_000_000n, 'trailing zeros are not extra decimals');
    assert.equal(toBaseUnits('123456789012345678901234567890.123456789', 9), 123456789012345678901234567890123456789n);
    assert.throws(() => toBaseUnits('0.0000000001', 9), /more than 9 decimal places/);
    assert.throws(() => toBaseUnits('1.5', 0), /more than 0 decimal places/);
    assert.throws(() => toBaseUnits('-1', 9), RangeError);
    assert.throws(() => toBaseUnits('1e3', 9), RangeError);
    assert.throws(() => toBaseUnits('1', 1.5), RangeError);

    assert.equal(fromBaseUnits(1_500_000_000n, 9), '1.5');
    assert.equal(fromBaseUnits(1n, 9), '0.000000001');
    assert.equal(fromBaseUnits(0n, 9), '0');
    assert.equal(fromBaseUnits(10_000_000n, 6), '10');
    assert.equal(fromBaseUnits(7n, 0), '7');
    assert.equal(fromBaseUnits(-1_500_000n, 6), '-1.5');
    assert.equal(fromBaseUnits(10n ** 40n + 1n, 18), '10000000000000000000000.000000000000000001');

    for (const [amount, decimals] of [
      ['10.5', 6],
      ['0.000001', 6],
      ['123.456789123', 9],
      ['1', 0],
      ['99999999999999999999.999999999999999999', 18],
    ] as const) {
      assert.equal(fromBaseUnits(toBaseUnits(amount, decimals), decimals), amount);
    }
    for (const units of [0n, 1n, 999n, 1_000_000_000n, 123_456_789_012_345_678n]) {
      assert.equal(toBaseUnits(fromBaseUnits(units, 9), 9), units);
    }
  });

  it('computes coin amounts rounded up to the coin decimals', () => {
    assert.equal(coinAmountFor('10', '0.2', 9), '2', '10 USD at 0.2 TON/USD');
    assert.equal(coinAmountFor('12.5', '0.2', 9), '2.5');
    assert.equal(coinAmountFor('10.01', '0.3333333333', 9), '3.336666667', '3.336666666333 rounds up at the 9th place');
    assert.equal(coinAmountFor('1', '0.0000001', 6), '0.000001', 'never below one base unit');
    assert.equal(coinAmountFor('0.000000001', '0.000000001', 9), '0.000000001');
    assert.equal(coinAmountFor('3', '0.333333333333333333333333333334', 6), '1.000001');
    assert.equal(coinAmountFor('10.50', '1', 6), '10.5', 'identity keeps the value, without trailing zeros');
    assert.equal(coinAmountFor('1.2345678', '1', 6), '1.234568');
    assert.equal(coinAmountFor('7', '3', 0), '21');
    assert.equal(coinAmountFor('7.1', '1', 0), '8');
    assert.throws(() => coinAmountFor('0', '1', 9), RangeError);
    assert.throws(() => coinAmountFor('1', '0', 9), RangeError);
    assert.throws(() => coinAmountFor('1', '-1', 9), RangeError);
  });

  it('never prints exponent notation', () => {
    assert.equal(coinAmountFor('0.00000001', '0.0000001', 18), '0.000000000000001');
    assert.equal(coinAmountFor('100000000000000000000000000', '1000', 9), '100000000000000000000000000000');
    assert.equal(addDecimal('0.0000000001', '0'), '0.0000000001');
    assert.equal(addDecimal('1000000000000000000000000000000', '1'), '1000000000000000000000000000001');
    assert.equal(divideDecimal('1', '10000000000'), '0.0000000001');
    assert.equal(plainDecimal('1.23e-7'), '0.000000123');
    assert.equal(plainDecimal('4.5E+21'), '4500000000000000000000');
    assert.equal(plainDecimal('5.10'), '5.1');
    assert.throws(() => plainDecimal('1e999999'), RangeError);
    assert.throws(() => plainDecimal('five'), RangeError);
  });

  it('compares and adds decimal strings', () => {
    assert.equal(compareDecimal('1.50', '1.5'), 0);
    assert.equal(compareDecimal('2', '10'), -1);
    assert.equal(compareDecimal('10', '9.999999999'), 1);
    assert.equal(compareDecimal('-1', '0'), -1);
    assert.equal(addDecimal('0.1', '0.2'), '0.3');
    assert.equal(addDecimal('1.5', '1.50'), '3');
    assert.equal(addDecimal('2', '-2.5'), '-0.5');
    assert.throws(() => addDecimal('1e3', '1'), RangeError);
  });

  it('divides into rates with bounded precision, rounded up', () => {
    assert.equal(divideDecimal('1', '5'), '0.2');
    assert.equal(divideDecimal('5', '1'), '5');
    assert.equal(divideDecimal('1', '3'), '0.333333333333333333333333333334');
    assert.equal(divideDecimal('2', '3', 5), '0.66667');
    assert.throws(() => divideDecimal('1', '0'), /division by zero/);
  });
});

import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { canonicalJson, NonFiniteNumberError, stableStringify } from '../../src/core/protocol/stableStringify';

// The text every pinned definition and audit record is hashed over: the same value must give the same text in every version.
describe('stableStringify', () => {
  it('sorts keys by UTF-16 code units at every depth and leaves undefined members out', () => {
    const value = { b: 1, a: [1, { d: undefined, c: 'é\u2028"' }], '': 0, A: true, ä: 1, '😀': 2, '\uffff': 3, 10: 'x', 2: 'y' };
    assert.equal(stableStringify(value), '{"":0,"10":"x","2":"y","A":true,"a":[1,{"c":"é\u2028\\""}],"b":1,"ä":1,"😀":2,"\uffff":3}');
  });

  it('writes array members JSON cannot carry as null, a hole as nothing, and objects by their own enumerable keys only', () => {
    // eslint-disable-next-line no-sparse-arrays
    assert.equal(stableStringify([undefined, () => 1, Symbol('s'), null, , 1]), '[null,null,null,null,,1]');
    assert.equal(stableStringify(Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true } })), '{"own":2}');
    assert.equal(stableStringify(new Date(0)), '{}');
    assert.equal(stableStringify(JSON.parse('{"__proto__":{"a":1},"b":[]}')), '{"__proto__":{"a":1},"b":[]}');
    assert.equal(stableStringify(undefined), 'null');
    assert.equal(stableStringify({ n: Infinity }), '{"n":null}');
  });

  it('refuses a number JSON cannot carry in canonical JSON, however deep', () => {
    assert.throws(() => canonicalJson({ a: [{ n: -Infinity }] }), NonFiniteNumberError);
    assert.equal(canonicalJson({ a: [{ n: 1.5 }] }), '{"a":[{"n":1.5}]}');
  });
});

import { expect } from 'chai';
import { deepCopy } from '../../../src/infra/docstore/embedded/deep-copy.js';

describe('deepCopy', () => {
  it('copies plain data all the way down, keeping types', () => {
    const source = { a: [1, { b: new Date(5) }], r: /x/gi, bytes: Buffer.from([1]), u8: new Uint8Array([2]), bare: Object.assign(Object.create(null), { k: 1 }) };
    const copy = deepCopy(source);
    expect(copy).to.deep.equal(source);
    expect(copy.a).to.not.equal(source.a);
    expect((copy.a[1] as { b: Date }).b).to.not.equal((source.a[1] as { b: Date }).b);
    expect(copy.r).to.be.instanceOf(RegExp).and.not.equal(source.r);
    expect(Buffer.isBuffer(copy.bytes)).to.equal(true);
    expect(copy.u8).to.be.instanceOf(Uint8Array).and.not.equal(source.u8);
    expect(Object.getPrototypeOf(copy.bare)).to.equal(null);
  });

  it('keeps a "__proto__" key as a field, never as the prototype of the copy', () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = deepCopy(source);
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
    expect(Object.keys(copy)).to.deep.equal(['__proto__', 'a']);
    expect((copy as { polluted?: boolean }).polluted).to.equal(undefined);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).to.deep.equal({ polluted: true });
  });

  it('leaves anything but plain data to structuredClone', () => {
    const map = new Map([['k', { v: 1 }]]);
    const copy = deepCopy({ map });
    expect(copy.map).to.be.instanceOf(Map).and.not.equal(map);
    expect(copy.map.get('k')).to.deep.equal({ v: 1 });
    const view = new DataView(new ArrayBuffer(2));
    view.setUint8(1, 7);
    expect(deepCopy({ view }).view.getUint8(1)).to.equal(7);
  });

  it('refuses what no store can keep, as structuredClone does, instead of storing null', () => {
    expect(() => deepCopy({ f: () => 1 })).to.throw();
    expect(() => deepCopy([Symbol('s')])).to.throw();
  });
});

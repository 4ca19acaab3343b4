import { expect } from 'chai';
import { numberVariants } from '../../src/domain/session/phone-numbers.js';

describe('number variants (Brazilian ninth digit)', () => {
  it('tries a Brazilian mobile with and without its ninth digit, as written first', () => {
    expect(numberVariants('5511988887777')).to.deep.equal(['5511988887777', '551188887777']);
    expect(numberVariants('551188887777')).to.deep.equal(['551188887777', '5511988887777']);
  });

  it('leaves landlines and other countries alone', () => {
    expect(numberVariants('551133334444')).to.deep.equal(['551133334444']);
    expect(numberVariants('14155550123')).to.deep.equal(['14155550123']);
    expect(numberVariants('4915112345678')).to.deep.equal(['4915112345678']);
  });
});

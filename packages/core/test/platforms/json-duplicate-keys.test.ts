// R-RW-3: the repeated-key scan the receipt verifier runs before it trusts JSON.parse.
import { describe, expect, it } from "vitest";
import { firstDuplicateKey } from "../../src/platforms/json-duplicate-keys";

describe("firstDuplicateKey", () => {
  it.each([
    ['{"a":1,"b":2}', null],
    ['{"a":1,"a":2}', "a"],
    ['{"a":1,"\\u0061":2}', "a"],
    ['{"x":{"a":1,"a":2}}', "a"],
    ['{"x":[{"a":1},{"a":2}]}', null],
    ['{"x":[{"a":1,"a":2}]}', "a"],
    ['{"s":"a\\",\\"s\\":1","t":2}', null],
    ['{"a":{"b":1},"b":2}', null],
    ['["a","a"]', null],
    ['{"a":"}","a":1}', "a"],
  ])("R-RW-3 %s -> %s", (text, duplicate) => {
    JSON.parse(text);
    expect(firstDuplicateKey(text)).toBe(duplicate);
  });
});

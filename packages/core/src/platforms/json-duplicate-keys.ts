// A JSON text's first repeated object key, at any depth. JSON.parse keeps the last of two equal
// keys, so a signed document could carry `"run":"a", ..., "run":"b"` and mean different things to
// two readers; the stop receipt's verifier refuses such a document before it reads any claim
// (R-RW-3). Keys are compared decoded (`"a"` and `"\u0061"` are the same key). The text must
// already be valid JSON (the caller parses it too); this only walks it.

/** The first key that repeats within one object, or null. */
export function firstDuplicateKey(text: string): string | null {
  // One set of seen keys per open object; null marks an open array.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, end)) as string;
        if (top.has(key)) return key;
        top.add(key);
      }
      expectKey = false;
      i = end;
      continue;
    }
    if (c === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (c === "[") {
      stack.push(null);
      expectKey = false;
    } else if (c === "}" || c === "]") {
      stack.pop();
      expectKey = false;
    } else if (c === ",") {
      expectKey = stack[stack.length - 1] instanceof Set;
    } else if (c === ":") {
      expectKey = false;
    }
    i += 1;
  }
  return null;
}

/** The index just past the string token that opens at `start` (a quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else i += 1;
  }
  return text.length;
}

// The raw bytes of a ustar header block's fields, read as GNU tar reads them, for the walker to
// hold against node-tar's decoded Header (R-UA-2): text hidden after a field's NUL, a size field
// both readers agree on, a name or link field that is exactly the first bytes of a GNU long name.

/** True when a NUL-terminated header field has further non-NUL bytes after its terminator. */
export function hidesTextAfterNul(block: Buffer, offset: number, length: number): boolean {
  const field = block.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  if (nul < 0) return false;
  for (let i = nul + 1; i < field.length; i++) if (field[i] !== 0) return true;
  return false;
}

/** The raw 12-byte size field: a number, or undefined when it is not one node-tar and GNU tar agree on. */
export function rawSizeField(block: Buffer): number | undefined {
  const first = block[124] as number;
  if (first & 0x80) {
    if (first !== 0x80) return undefined; // negative or non-standard base-256
    let value = 0;
    for (let i = 125; i < 136; i++) value = value * 256 + (block[i] as number);
    return Number.isSafeInteger(value) ? value : undefined;
  }
  const text = block.toString("latin1", 124, 136).replace(/\0.*$/s, "").trim();
  if (!/^[0-7]*$/.test(text)) return undefined;
  return text === "" ? 0 : parseInt(text, 8);
}

/** A 100-byte ustar name or linkname field, up to its NUL. */
export function ustarField(block: Buffer, offset: number): Buffer {
  const field = block.subarray(offset, offset + 100);
  const nul = field.indexOf(0);
  return nul < 0 ? field : field.subarray(0, nul);
}

/** True when `field` is non-empty and exactly the first bytes of `value`'s UTF-8 form. */
export function isBytePrefix(field: Buffer, value: string): boolean {
  const full = Buffer.from(value, "utf8");
  return field.length > 0 && field.length <= full.length && full.subarray(0, field.length).equals(field);
}

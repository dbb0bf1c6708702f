import { describe, expect, it } from "vitest";
import { apiKeyKindOf, bearerTokenOf, generateApiKey, hashApiKey, lastUsedIsStale } from "~/server/auth/api-keys";

describe("API key material", () => {
  it("generates prefixed 32-byte base64url secrets, distinct each time, with their sha256", () => {
    const board = generateApiKey("board");
    const agent = generateApiKey("agent");
    expect(board.secret).toMatch(/^cbk_[A-Za-z0-9_-]{43}$/);
    expect(agent.secret).toMatch(/^cba_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(board.secret.slice(4), "base64url")).toHaveLength(32);
    expect(board.hash).toBe(hashApiKey(board.secret));
    expect(board.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(board.displayPrefix).toBe(board.secret.slice(0, 12));
    expect(new Set(Array.from({ length: 100 }, () => generateApiKey("board").secret)).size).toBe(100);
  });

  it("tells board keys from agent keys and refuses anything else", () => {
    expect(apiKeyKindOf(generateApiKey("board").secret)).toBe("board");
    expect(apiKeyKindOf(generateApiKey("agent").secret)).toBe("agent");
    for (const other of ["", "cbk_short", `cbx_${"a".repeat(43)}`, `cbk_${"a".repeat(44)}`, `cbk_${"a".repeat(42)}=`]) expect(apiKeyKindOf(other)).toBeNull();
  });

  it("reads bearer tokens; a malformed Authorization header is an empty (invalid) token, not an absent one", () => {
    expect(bearerTokenOf(new Headers())).toBeUndefined();
    expect(bearerTokenOf(new Headers({ authorization: "Bearer cbk_abc" }))).toBe("cbk_abc");
    expect(bearerTokenOf(new Headers({ authorization: "bearer   cbk_abc  " }))).toBe("cbk_abc");
    expect(bearerTokenOf(new Headers({ authorization: "Basic Zm9vOmJhcg==" }))).toBe("");
  });

  it("writes lastUsedAt at most once a minute", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    expect(lastUsedIsStale(null, now)).toBe(true);
    expect(lastUsedIsStale(new Date(now.getTime() - 59_000), now)).toBe(false);
    expect(lastUsedIsStale(new Date(now.getTime() - 60_000), now)).toBe(true);
  });
});

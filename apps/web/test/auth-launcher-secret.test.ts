// The launcher's authenticated-mode secret (scripts/launch/auth.ts; scripts have no vitest project).
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureAuthSecret } from "../../../scripts/launch/auth";
import { parseLaunchEnv } from "../../../scripts/launch/env";

const homes: string[] = [];
/** Launcher variables as the process environment type (which Next's types give a required NODE_ENV). */
const vars = (values: Record<string, string>) => values as unknown as NodeJS.ProcessEnv;
afterEach(async () => {
  await Promise.all(homes.splice(0).map((home) => fs.rm(home, { recursive: true, force: true })));
});

async function launchEnv(extra: Record<string, string> = {}) {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "copyback-auth-secret-"));
  homes.push(home);
  return parseLaunchEnv(vars({ COPYBACK_HOME: path.join(home, "instance"), COPYBACK_DEPLOYMENT_MODE: "authenticated", ...extra }));
}

describe("ensureAuthSecret", () => {
  it("generates a secret once under the instance root, owner-readable only, and reuses it", async () => {
    const env = await launchEnv();
    const first = await ensureAuthSecret(env);
    expect(first.secret.length).toBeGreaterThanOrEqual(32);
    const file = path.join(env.COPYBACK_HOME, "auth-secret");
    expect(first.source).toBe(file);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await ensureAuthSecret(env)).secret).toBe(first.secret);
  });

  it("prefers a configured secret and writes no file", async () => {
    const env = await launchEnv({ COPYBACK_AUTH_SECRET: "s".repeat(40) });
    expect(await ensureAuthSecret(env)).toEqual({ secret: "s".repeat(40), source: "COPYBACK_AUTH_SECRET" });
    await expect(fs.stat(path.join(env.COPYBACK_HOME, "auth-secret"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a secret file other users can read, and a too short one", async () => {
    const env = await launchEnv();
    const file = path.join(env.COPYBACK_HOME, "auth-secret");
    await fs.mkdir(env.COPYBACK_HOME, { recursive: true });
    await fs.writeFile(file, "x".repeat(40), { mode: 0o644 });
    await fs.chmod(file, 0o644);
    await expect(ensureAuthSecret(env)).rejects.toThrow(/readable by other users/);
    await fs.writeFile(file, "short");
    await fs.chmod(file, 0o600);
    await expect(ensureAuthSecret(env)).rejects.toThrow(/fewer than 32/);
  });

  it("refuses a configured secret shorter than 32 characters at parse time", () => {
    expect(() => parseLaunchEnv(vars({ COPYBACK_AUTH_SECRET: "too short" }))).toThrow(/COPYBACK_AUTH_SECRET/);
  });
});

describe("local mode binding (the launcher's configuration)", () => {
  it("refuses local mode on a non-loopback host and accepts authenticated mode there", () => {
    expect(() => parseLaunchEnv(vars({ COPYBACK_HOST: "0.0.0.0" }))).toThrow(/loopback/);
    expect(parseLaunchEnv(vars({ COPYBACK_HOST: "0.0.0.0", COPYBACK_DEPLOYMENT_MODE: "authenticated" })).COPYBACK_HOST).toBe("0.0.0.0");
    expect(parseLaunchEnv(vars({ COPYBACK_HOST: "::1" })).COPYBACK_HOST).toBe("::1");
  });
});

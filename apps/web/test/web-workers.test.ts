import { describe, expect, it } from "vitest";
import { webWorkerCount } from "../scripts/web-workers.mjs";

const SECRET = "web-workers-test-secret-0123456789abcdefghijklmnop";

describe("webWorkerCount (how many `next start` processes serve.mjs runs)", () => {
  it("local mode without the render cache runs one process per core, at most two", () => {
    expect(webWorkerCount({}, 1)).toBe(1);
    expect(webWorkerCount({ COPYBACK_DEPLOYMENT_MODE: "local" }, 2)).toBe(2);
    expect(webWorkerCount({}, 8)).toBe(2);
    expect(webWorkerCount({ COPYBACK_CONSOLE_SECRET: SECRET, COPYBACK_WEB_RENDER_CACHE: "off" }, 2)).toBe(2);
  });

  it("local mode with the render cache runs one process: a second one would render every change again", () => {
    expect(webWorkerCount({ COPYBACK_CONSOLE_SECRET: SECRET }, 2)).toBe(1);
    expect(webWorkerCount({ COPYBACK_CONSOLE_SECRET: SECRET, COPYBACK_WEB_RENDER_CACHE: "on" }, 8)).toBe(1);
    expect(webWorkerCount({ COPYBACK_CONSOLE_SECRET: SECRET, COPYBACK_WEB_WORKERS: "2" }, 2)).toBe(2);
  });

  it("authenticated mode stays on one process: the sign-in throttle counts in memory", () => {
    expect(webWorkerCount({ COPYBACK_DEPLOYMENT_MODE: "authenticated" }, 8)).toBe(1);
  });

  it("COPYBACK_WEB_WORKERS decides when set, in either mode", () => {
    expect(webWorkerCount({ COPYBACK_WEB_WORKERS: "3", COPYBACK_DEPLOYMENT_MODE: "authenticated" }, 2)).toBe(3);
    expect(webWorkerCount({ COPYBACK_WEB_WORKERS: "1" }, 8)).toBe(1);
    expect(webWorkerCount({ COPYBACK_WEB_WORKERS: " " }, 2)).toBe(2);
  });

  it("refuses a count that is not a whole number from 1 to 16", () => {
    for (const bad of ["0", "-1", "1.5", "two", "17"])
      expect(() => webWorkerCount({ COPYBACK_WEB_WORKERS: bad }, 2)).toThrow(/COPYBACK_WEB_WORKERS/);
  });
});

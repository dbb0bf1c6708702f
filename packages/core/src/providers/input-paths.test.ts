import { describe, expect, it } from "vitest";
import { checkInputPaths, checkInputRelativePath, inputFileName, inputRelativePath, MAX_INPUT_NAME_BYTES } from "./input-paths";

const ID = "7d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";

describe("sandbox input names (R-RC-5)", () => {
  it("R-RC-5 an attachment's stored file name is kept when it is one safe path component", () => {
    expect(inputFileName("design notes.md")).toBe("design notes.md");
    expect(inputFileName("résumé – v2.txt")).toBe("résumé – v2.txt");
    expect(inputRelativePath(ID, "notes.md")).toBe(`${ID}/notes.md`);
  });

  it("R-RC-5 folder separators and control characters become _, and an empty, . or .. name becomes attachment", () => {
    expect(inputFileName("../../etc/passwd")).toBe(".._.._etc_passwd");
    expect(inputFileName("a\\b")).toBe("a_b");
    expect(inputFileName("line\nbreak\u0000\u007f")).toBe("line_break__");
    for (const name of ["", ".", "..", null]) expect(inputFileName(name)).toBe("attachment");
  });

  it("R-RC-5 a name longer than 255 bytes is cut without splitting a character, keeping its extension", () => {
    const long = `${"é".repeat(300)}.md`;
    const cut = inputFileName(long);
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(MAX_INPUT_NAME_BYTES);
    expect(cut.endsWith("é.md")).toBe(true);
    expect(cut).not.toContain("\ufffd");
    const noExt = inputFileName("x".repeat(400));
    expect(noExt).toBe("x".repeat(MAX_INPUT_NAME_BYTES));
  });

  it("R-RC-5 a provider refuses any input path but one or two safe components, and two inputs at one path", () => {
    expect(checkInputRelativePath(`${ID}/notes.md`)).toEqual([ID, "notes.md"]);
    expect(checkInputRelativePath("reconstruction.json")).toEqual(["reconstruction.json"]);
    for (const bad of ["", "..", `${ID}/a/b`, `../x`, `${ID}/..`, `./x`, `/abs`, `${ID}/`, `a/b\u0000`, `${ID}/${"y".repeat(256)}`]) {
      expect(() => checkInputRelativePath(bad), bad).toThrow(expect.objectContaining({ code: "provider_input_path_invalid" }));
    }
    expect(() => checkInputPaths([`${ID}/a`, `${ID}/b`])).not.toThrow();
    expect(() => checkInputPaths([`${ID}/a`, `${ID}/a`])).toThrow(expect.objectContaining({ code: "provider_input_path_invalid" }));
  });

  it("R-RC-5 a file directly in the inputs directory cannot share its name with another input's folder", () => {
    expect(() => checkInputPaths([`${ID}/a`, "reconstruction.json"])).not.toThrow();
    expect(() => checkInputPaths(["reconstruction.json", "reconstruction.json/a"])).toThrow(expect.objectContaining({ code: "provider_input_path_invalid" }));
    expect(() => checkInputPaths(["x/a", "x"])).toThrow(expect.objectContaining({ code: "provider_input_path_invalid" }));
  });
});

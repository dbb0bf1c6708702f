// The demo execution workspace: a real directory with a few real files, so that the first
// run of the demo agent has something to read and copy back.
import { mkdir, realpath, writeFile } from "node:fs/promises";
import path from "node:path";

export const DEMO_WORKSPACE_FILES: Readonly<Record<string, string>> = {
  "README.md": `# Acme Robotics: main workspace

The host copy of Acme's main project. Agents work on a copy of this directory inside their
sandbox; Copyback merges their changes back here.
`,
  "src/index.ts": `// Entry point of the Acme motor controller service.
export function greet(name: string): string {
  return \`Hello, \${name}, from Acme Robotics\`;
}
`,
  "docs/notes.md": `# Notes

- Calibrate the arm sensors before every release.
- The motor controller API is documented in docs/motor-controller.md (to be written).
`,
};

/**
 * Creates `<instanceRoot>/workspaces/<name>` with the demo files and returns its canonical
 * path. Files that already exist are left as they are: the directory is the user's now.
 */
export async function ensureDemoWorkspace(instanceRoot: string, name: string): Promise<string> {
  const root = path.join(path.resolve(instanceRoot), "workspaces", name);
  await mkdir(root, { recursive: true });
  for (const [relative, content] of Object.entries(DEMO_WORKSPACE_FILES)) {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content, { flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  // The canonical host directory (symlinks resolved) is what copyback locks and writes into.
  return realpath(root);
}

// Generates a benchmark workspace (workspace.ts) in a child process, so that the benchmark's own
// resident set does not carry the generator's gigabytes of random buffers into the memory it
// measures. `forkGenerate` runs this file; it answers with the generated workspace over IPC.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { generateWorkspace, type GeneratedWorkspace, type WorkspaceSpec } from "./workspace";

/** `listFiles: false`: the answer's file list is left empty (199,000 paths the caller would only hold). */
export async function forkGenerate(root: string, spec: WorkspaceSpec, opts: { listFiles?: boolean } = {}): Promise<GeneratedWorkspace> {
  // process.execArgv carries the TypeScript loader (tsx) the benchmark itself runs under.
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    let answer: GeneratedWorkspace | undefined;
    child.once("message", (message) => {
      answer = message as GeneratedWorkspace;
    });
    child.once("error", reject);
    child.once("exit", (code) => (answer && code === 0 ? resolve(answer) : reject(new Error(`workspace generator exited with ${String(code)}`))));
    child.send({ root, spec, listFiles: opts.listFiles !== false });
  });
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once("message", (message) => {
    const { root, spec, listFiles } = message as { root: string; spec: WorkspaceSpec; listFiles: boolean };
    generateWorkspace(root, spec).then(
      (generated) => process.send?.(listFiles ? generated : { ...generated, files: [] }, () => process.disconnect()),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

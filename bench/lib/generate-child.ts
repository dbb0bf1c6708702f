// Generates a benchmark workspace (workspace.ts) in a child process, so that the benchmark's own
// resident set does not carry the generator's gigabytes of random buffers into the memory it
// measures. `forkGenerate` runs this file; it answers with the generated workspace over IPC.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { generateWorkspace, type GeneratedWorkspace, type WorkspaceSpec } from "./workspace";

export async function forkGenerate(root: string, spec: WorkspaceSpec): Promise<GeneratedWorkspace> {
  // process.execArgv carries the TypeScript loader (tsx) the benchmark itself runs under.
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    let answer: GeneratedWorkspace | undefined;
    child.once("message", (message) => {
      answer = message as GeneratedWorkspace;
    });
    child.once("error", reject);
    child.once("exit", (code) => (answer && code === 0 ? resolve(answer) : reject(new Error(`workspace generator exited with ${String(code)}`))));
    child.send({ root, spec });
  });
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once("message", (message) => {
    const { root, spec } = message as { root: string; spec: WorkspaceSpec };
    generateWorkspace(root, spec).then(
      (generated) => process.send?.(generated, () => process.disconnect()),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

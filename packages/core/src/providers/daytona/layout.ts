// Where copyback keeps things inside a Daytona sandbox, relative to the sandbox's working
// directory (the toolbox resolves relative paths there, for files and for commands alike):
//
//   copyback/workspace/              the agent's files: the only tree seeded and exported
//   copyback/sentinel.json           R-DT-2: the acquisition-time sentinel, outside the export
//   copyback/inputs/<folder>/<file>  R-RC-5: placeInputs' files, outside the export
//   copyback/pack/                   R-PV-1: placeAgentPack's files (the agent's runtime), outside the export
//   copyback/control/                the provider's own files, outside the export
//     agent/result.json              COPYBACK_RESULT_FILE
//     stat-cache.tsv                 the delta export's stat cache (delta-export.ts)
//     transfers/                     archives on their way in or out, removed after each transfer
//
// A Daytona sandbox runs the agent as the sandbox's one user: nothing here is hidden from it,
// unlike a bubblewrapped local sandbox. The sentinel is still never exported nor seeded over, so
// a workspace copied from elsewhere cannot carry one in.
export const LAYOUT = {
  root: "copyback",
  workspace: "copyback/workspace",
  sentinel: "copyback/sentinel.json",
  inputs: "copyback/inputs",
  pack: "copyback/pack",
  control: "copyback/control",
  agentDir: "copyback/control/agent",
  resultFile: "copyback/control/agent/result.json",
  statCache: "copyback/control/stat-cache.tsv",
  transfers: "copyback/control/transfers",
} as const;

/** Pure: one shell word, single-quoted (the toolbox runs commands through a shell). */
export function shellQuote(word: string): string {
  if (word.includes("\0")) throw new Error("a shell word cannot hold a NUL byte");
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

// Pure policy over the whole set of entries of one archive (R-UA-2): what each entry may do to
// the tree built by the entries before it, and, once every entry is known, where each symlink
// leads. Path text is checked before (entry-path.ts); this file only sees clean components.
import type { ArchiveLimits } from "./limits";
import { resolveLinkTarget, type LinkLookup } from "./symlink-resolution";
import { violation, type ArchiveViolation } from "./violations";

export type TreeEntryKind = "file" | "directory" | "symlink";

/** "implied" = a parent directory that only exists because deeper entries name it. */
type TreeNodeKind = TreeEntryKind | "implied";

interface PendingLink {
  rawPath: string;
  parent: string[];
  target: string;
}

/** Only code points below 128: such a string is its own NFC form, and upper-then-lower case is lower case. */
// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The key's NFC form (an ASCII key is returned as is, the same string with its hash). */
function nfcOf(key: string): string {
  return ASCII_ONLY.test(key) ? key : key.normalize("NFC");
}

/** NFC, then a case fold: two names equal here are one file on macOS or Windows hosts. */
export function foldKey(key: string): string {
  // For ASCII, NFC changes nothing and upper-then-lower is lower alone (only A-Z change).
  if (ASCII_ONLY.test(key)) return key.toLowerCase();
  return key.normalize("NFC").toUpperCase().toLowerCase();
}

/** The key under which a host may find a symlink: case-folded unless case collisions are allowed. */
export function linkLookupKey(
  key: string,
  limits: Pick<ArchiveLimits, "rejectCaseCollisions">,
): string {
  // A host that folds case would follow "D/ESC" into a link named "d/esc"; resolve like it.
  return limits.rejectCaseCollisions ? foldKey(key) : nfcOf(key);
}

// Memory (200,000 entries in one archive): a node is its kind alone (a constant
// string, no object per path), and the two collision indexes hold only the keys whose NFC form,
// or whose folded form, differs from the key itself. A key that is its own NFC form (every ASCII
// path) is found through `nodes`; an NFC form that is its own fold (every lower-case ASCII path)
// likewise. Lookups answer exactly what maps holding every key would (nfcOwner, foldOwner).
export class ArchiveTreePolicy {
  private readonly nodes = new Map<string, TreeNodeKind>();
  /** NFC form -> the exact key registered under it, for keys that are not their own NFC form. */
  private readonly byNfc = new Map<string, string>();
  /** Case-folded form -> the NFC form registered under it, for NFC forms that are not their own fold. */
  private readonly byFold = new Map<string, string>();
  /** Symlinks by the key a host may look them up with (folded unless collisions are allowed). */
  private readonly linksByLookupKey = new Map<string, string>();
  private readonly links: PendingLink[] = [];
  private rootSeen = false;
  /**
   * The components of the last entry whose parents all passed the loop in add()
   * (siblings follow each other in archives and sorted manifests). Once a parent is a directory
   * or an implied one it stays so (a later file or link over it is refused, never recorded), and
   * the entries added since are not parents of a sibling, so the same parents pass again as they
   * are: the loop is skipped, with the same verdict. The caller's array itself is kept: both
   * callers (validate.ts, delta/tree-check.ts) pass a fresh one per entry and never change it.
   */
  private lastPassed: readonly string[] | undefined;

  constructor(private readonly limits: Pick<ArchiveLimits, "rejectCaseCollisions">) {}

  /**
   * Records one entry; returns the violation it commits, if any. `resolve: false` marks a link
   * whose target was already refused (absolute): it still occupies its path and other links may
   * lead through it, but it is not reported a second time.
   */
  add(
    rawPath: string,
    components: readonly string[],
    kind: TreeEntryKind,
    target?: string,
    resolve = true,
    /** `components` joined by "/" when the caller has it (validate.ts shares that one string). */
    joinedKey?: string,
  ): ArchiveViolation | undefined {
    if (components.length === 0) {
      if (kind !== "directory") {
        return violation("type_conflict", rawPath, "the archive root can only be a directory");
      }
      if (this.rootSeen)
        return violation("duplicate_entry", rawPath, "the archive root appears twice");
      this.rootSeen = true;
      return undefined;
    }
    // Every parent must be a directory that no symlink or file stands in for. The parent may be
    // named by a later entry: a symlink arriving over an implied directory is refused below.
    // Stryker disable next-line StringLiteral: equivalent, the loop assigns prefix at i === 0 before reading it
    let prefix = "";
    const sameParents = this.sameParentsAsLast(components);
    for (let i = 0; !sameParents && i < components.length - 1; i++) {
      prefix = i === 0 ? (components[0] as string) : `${prefix}/${components[i] as string}`;
      const node = this.nodes.get(prefix);
      if (node === "symlink") {
        return violation(
          "through_symlink",
          rawPath,
          "entry path passes through a symbolic link from earlier in the archive",
        );
      }
      if (node === "file") {
        return violation("type_conflict", rawPath, "a parent of this entry is a regular file");
      }
      if (!node) {
        const collision = this.register(prefix, rawPath);
        if (collision) return collision;
        this.nodes.set(prefix, "implied");
      }
    }
    this.lastPassed = components;
    const key = joinedKey ?? components.join("/");
    const existing = this.nodes.get(key);
    if (existing) {
      if (existing !== "implied") {
        return violation("duplicate_entry", rawPath, "the same path appears twice in the archive");
      }
      if (kind === "symlink") {
        return violation(
          "through_symlink",
          rawPath,
          "a symbolic link replaces a directory that earlier entries were written into",
        );
      }
      if (kind === "file") {
        return violation(
          "type_conflict",
          rawPath,
          "a regular file replaces a directory that earlier entries were written into",
        );
      }
      this.nodes.set(key, "directory");
      return undefined;
    }
    const collision = this.register(key, rawPath);
    if (collision) return collision;
    // A link's target is kept in linksByLookupKey, where resolution reads it.
    this.nodes.set(key, kind);
    if (kind === "symlink" && target !== undefined) {
      this.linksByLookupKey.set(this.lookupKey(key), target);
      if (resolve) this.links.push({ rawPath, parent: components.slice(0, -1), target });
    }
    return undefined;
  }

  /** Resolves every symlink through the archive's own links; call once all entries are added. */
  async finish(): Promise<ArchiveViolation[]> {
    const found: ArchiveViolation[] = [];
    const lookup = (components: readonly string[]): LinkLookup => {
      const target = this.linksByLookupKey.get(this.lookupKey(components.join("/")));
      return target === undefined ? { kind: "other" } : { kind: "symlink", target };
    };
    for (const link of this.links) {
      const result = await resolveLinkTarget(link.parent, link.target, lookup);
      if (result.kind === "escape" || result.kind === "absolute") {
        found.push(
          violation("symlink_escape", link.rawPath, "symbolic link resolves outside the workspace"),
        );
      } else if (result.kind === "loop") {
        found.push(
          violation(
            "symlink_loop",
            link.rawPath,
            "symbolic link does not resolve (too many levels of links)",
          ),
        );
      }
    }
    return found;
  }

  /** True when `components` has exactly the parents of the last entry whose parents passed. */
  private sameParentsAsLast(components: readonly string[]): boolean {
    const last = this.lastPassed;
    if (last === undefined || last.length !== components.length) return false;
    for (let i = 0; i < components.length - 1; i++) if (last[i] !== components[i]) return false;
    return true;
  }

  private lookupKey(key: string): string {
    return linkLookupKey(key, this.limits);
  }

  /** The key registered with this NFC form, if any. */
  private nfcOwner(nfc: string): string | undefined {
    // Every key in `nodes` was registered; one equal to `nfc` is its own NFC form.
    return this.byNfc.get(nfc) ?? (this.nodes.has(nfc) ? nfc : undefined);
  }

  /** The registered NFC form with this fold, if any. */
  private foldOwner(fold: string): string | undefined {
    const explicit = this.byFold.get(fold);
    if (explicit !== undefined) return explicit;
    // Not in byFold: only an NFC form that is its own fold can own it, and then it is `fold`.
    const registeredNfc =
      this.byNfc.has(fold) || (this.nodes.has(fold) && nfcOf(fold) === fold);
    return registeredNfc && foldKey(fold) === fold ? fold : undefined;
  }

  private register(key: string, rawPath: string): ArchiveViolation | undefined {
    const nfc = nfcOf(key);
    const sameNfc = this.nfcOwner(nfc);
    if (sameNfc !== undefined && sameNfc !== key) {
      return violation(
        "normalization_collision",
        rawPath,
        "two paths differ only by Unicode normalization (NFC/NFD)",
      );
    }
    if (this.limits.rejectCaseCollisions) {
      const fold = foldKey(nfc);
      const sameFold = this.foldOwner(fold);
      if (sameFold !== undefined && sameFold !== nfc) {
        return violation("case_collision", rawPath, "two paths differ only by letter case");
      }
      if (fold !== nfc) this.byFold.set(fold, nfc);
    }
    if (nfc !== key) this.byNfc.set(nfc, key);
    return undefined;
  }
}

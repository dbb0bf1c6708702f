// The matrix's world: the auth tests' two companies (reused from auth-fixture.ts), plus what the
// matrix adds: a credential for every principal (real sign-ins for session users, real keys for
// bearer principals) and fresh targets for the calls that change state.
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";
import { POST as authPOST } from "~/app/api/auth/[...all]/route";
import { setPassword } from "~/server/auth/credentials";
import { LOCAL_CONSOLE_COOKIE, consoleCookieValue } from "~/server/auth/local-console";
import {
  CONSOLE_COOKIE,
  PASSWORD,
  SAME_ORIGIN,
  buildAuthWorld,
  cookieHeaderFrom,
  insertAgentKey,
  insertBoardKey,
  request,
  type AuthWorld,
} from "../auth-fixture";
import { createFileHold, type FileHold } from "../file-hold-fixture";
import { createDestroyedSource, createExportHold, type DestroyedSource, type ExportHold } from "../export-hold-fixture";
import { createOwnerHold, type OwnerHold } from "../recovery-fixture";
import type { DeploymentMode } from "./expectations";
import type { Credential, PrincipalName } from "./principals";

export interface MatrixWorld {
  prisma: PrismaClient;
  mode: DeploymentMode;
  auth: AuthWorld;
  /** Company A: the company every cell targets. */
  companyId: string;
  /** Only the principals this deployment mode can have. */
  credentials: Readonly<Partial<Record<PrincipalName, Credential>>>;
  fresh: FreshTargets;
}

export function credentialOf(world: MatrixWorld, principal: PrincipalName): Credential {
  const credential = world.credentials[principal];
  if (!credential) throw new Error(`${principal} does not exist in ${world.mode} mode`);
  return credential;
}

/** New rows for one cell of a state-changing call, so that no cell depends on another's outcome. */
export interface FreshTargets {
  /** A `todo` task of company A at status version 0. */
  issue(): Promise<{ id: string }>;
  /** An active `member` membership of a new user in company A. */
  membership(): Promise<{ id: string }>;
  /** A live board key of company A's member. */
  boardKey(): Promise<{ id: string }>;
  /** A live agent key of company A's second agent. */
  agentKey(): Promise<{ id: string }>;
  /** A user with a password, signing in for the first time (the sign-in endpoint's cells). */
  signInUser(): Promise<{ email: string }>;
  /** A `todo` task of company A that can be woken: assigned to an agent with an environment, with an execution workspace. */
  wakeableIssue(): Promise<{ id: string }>;
  /** A running native run of company A's agent (the agent key's own), waiting for its result. */
  runningRun(): Promise<{ id: string }>;
  /** An unverified copyback owner hold of company A (a dead controller's receipt on a finalizing run). */
  ownerHold(): Promise<OwnerHold>;
  /** An export-retry hold of company A: a real local sandbox stopped and retained (export-hold-fixture). */
  exportHold(): Promise<ExportHold>;
  /** An export hold of company A whose sandbox was discarded (R-RC-1), with a stored attachment. */
  destroyedSource(): Promise<DestroyedSource>;
  /** A legacy repair hold of company A, its lease stopped and retained (file-hold-fixture). */
  fileHold(): Promise<FileHold>;
}

let sequence = 0;

export async function buildMatrixWorld(
  prisma: PrismaClient,
  mode: DeploymentMode,
): Promise<MatrixWorld> {
  const auth = await buildAuthWorld(prisma);
  const companyId = auth.companyA.id;
  const stamp = `${auth.tag}-matrix`;

  // R-UI-5: a real user whose membership data the database could never hold.
  const roleless = await prisma.user.create({
    data: { name: "Uma Unknown", email: `uma.${stamp}@auth.example` },
  });
  const constructed = (role: string | null): Credential => ({
    kind: "constructed",
    principal: {
      kind: "board_user",
      userId: roleless.id,
      isInstanceAdmin: false,
      via: "session",
      memberships: [{ companyId, role, status: "active" }],
    } satisfies Principal,
  });

  const agentKey = await insertAgentKey(prisma, companyId, auth.a.agent.id);
  const otherAgentKey = await insertAgentKey(prisma, companyId, auth.secondAgentA.id);
  const ownerKey = await insertBoardKey(prisma, companyId, auth.users.owner.id);
  const revokedKey = await insertBoardKey(prisma, companyId, auth.users.owner.id, {
    revokedAt: new Date(),
  });

  // Session users exist only in authenticated mode; local mode has no sign-in (and a request
  // without a credential there is the local board, so no stand-in credential is made up).
  const sessions = async (): Promise<Partial<Record<PrincipalName, Credential>>> => {
    if (mode === "local") return {};
    const session = async (email: string): Promise<Credential> => ({
      kind: "session",
      cookie: await signIn(email),
    });
    return {
      member: await session(auth.users.member.email),
      runtime_manager: await session(auth.users.manager.email),
      admin: await session(auth.users.admin.email),
      owner: await session(auth.users.owner.email),
      suspended_member: await session(auth.users.suspended.email),
      other_company_owner: await session(auth.users.otherOwner.email),
      instance_admin: await session(auth.users.instanceAdmin.email),
      unknown_role: constructed("superuser"),
      missing_role: constructed(null),
    };
  };

  const credentials: Partial<Record<PrincipalName, Credential>> = {
    anonymous: mode === "local" ? { kind: "rebinding_host", cookie: CONSOLE_COOKIE.cookie } : { kind: "none" },
    ...(mode === "local"
      ? {
          local_board: { kind: "loopback", cookie: CONSOLE_COOKIE.cookie } as const,
          local_process: { kind: "loopback" } as const,
          forged_console_cookie: { kind: "loopback", cookie: `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue("a-secret-of-another-instance-0123456789abcdef")}` } as const,
        }
      : {}),
    agent_key: { kind: "bearer", secret: agentKey.secret },
    other_agent_key: { kind: "bearer", secret: otherAgentKey.secret },
    owner_board_key: { kind: "bearer", secret: ownerKey.secret },
    revoked_key: { kind: "bearer", secret: revokedKey.secret },
    ...(await sessions()),
  };

  let issueNumber = 1000;
  const newIssue = (extra: { assigneeAgentId?: string; executionWorkspaceId?: string } = {}) => {
    const number = ++issueNumber;
    return prisma.issue.create({
      data: {
        companyId,
        number,
        identifier: `ACME-${number}`,
        title: `Matrix target ${number}`,
        status: "todo",
        statusVersion: 0,
        ...extra,
      },
      select: { id: true },
    });
  };
  // What a wake needs besides the task: an agent with an environment and an execution workspace.
  const waker = await prisma.agent.create({
    data: { companyId, name: `Waker ${stamp}`, command: ["/bin/true"], environmentId: auth.a.environment.id },
  });
  const workspace = await prisma.executionWorkspace.create({
    data: { companyId, name: `matrix-${stamp}`, hostPath: `/nonexistent/copyback-matrix-${stamp}` },
  });
  const fresh: FreshTargets = {
    issue: () => newIssue(),
    wakeableIssue: () => newIssue({ assigneeAgentId: waker.id, executionWorkspaceId: workspace.id }),
    runningRun: async () => {
      const issue = await newIssue();
      const run = await prisma.heartbeatRun.create({
        data: { companyId, agentId: auth.a.agent.id, nativeIssueId: issue.id, status: "running", runtimeMode: "native", startedAt: new Date() },
        select: { id: true },
      });
      await prisma.nativeRunFinalization.create({ data: { companyId, runId: run.id, issueId: issue.id, phase: "observed" } });
      return run;
    },
    // Its task's last activity lies in the past, so the many holds of a matrix run never push
    // the world's issue off the board's first page (issues.list's cells look for it there).
    exportHold: () =>
      createExportHold(prisma, { companyId, agentId: auth.a.agent.id, environmentId: auth.a.environment.id, lastActivityAt: new Date(Date.UTC(2020, 0, 1)) }),
    destroyedSource: () =>
      createDestroyedSource(prisma, { companyId, agentId: auth.a.agent.id, environmentId: auth.a.environment.id, lastActivityAt: new Date(Date.UTC(2020, 0, 1)) }),
    ownerHold: () =>
      createOwnerHold(prisma, {
        companyId,
        agentId: auth.a.agent.id,
        environmentId: auth.a.environment.id,
        lastActivityAt: new Date(Date.UTC(2020, 0, 1)),
      }),
    fileHold: () =>
      createFileHold(prisma, { companyId, agentId: auth.a.agent.id, environmentId: auth.a.environment.id, lastActivityAt: new Date(Date.UTC(2020, 0, 1)) }),
    membership: async () => {
      const n = ++sequence;
      const user = await prisma.user.create({
        data: { name: `Target ${n}`, email: `target${n}.${stamp}@auth.example` },
      });
      return prisma.companyMembership.create({
        data: { companyId, userId: user.id, role: "member", status: "active" },
        select: { id: true },
      });
    },
    boardKey: () => insertBoardKey(prisma, companyId, auth.users.member.id),
    agentKey: () => insertAgentKey(prisma, companyId, auth.secondAgentA.id),
    signInUser: async () => {
      const n = ++sequence;
      const user = await prisma.user.create({
        data: { name: `Signer ${n}`, email: `signer${n}.${stamp}@auth.example` },
      });
      await setPassword(prisma, user.id, PASSWORD);
      return { email: user.email };
    },
  };

  return { prisma, mode, auth, companyId, credentials, fresh };
}

let signInAddress = 0;

/** A client address no other sign-in used (better-auth and our limiter count per address). */
export function freshClientAddress(): string {
  signInAddress += 1;
  return `203.0.${Math.floor(signInAddress / 250)}.${(signInAddress % 250) + 1}`;
}

/** A real sign-in through better-auth's route handler; the Cookie header of the session it set. */
async function signIn(email: string): Promise<string> {
  const response = await authPOST(
    request({
      path: "/api/auth/sign-in/email",
      body: { email, password: PASSWORD },
      // One client address per sign-in, so the sign-in rate limits never interfere.
      headers: { ...SAME_ORIGIN, "x-forwarded-for": freshClientAddress() },
    }),
  );
  if (response.status !== 200)
    throw new Error(`sign-in of ${email} failed: ${response.status} ${await response.text()}`);
  const cookie = cookieHeaderFrom(response);
  if (!cookie) throw new Error(`sign-in of ${email} set no session cookie`);
  return cookie;
}

/** What a cell's call builder gets: the world, who is asking, and a label unique to the cell. */
export interface CellContext {
  world: MatrixWorld;
  principal: PrincipalName;
  tag: string;
}

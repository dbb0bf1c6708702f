// The part of Railway's public GraphQL schema (backboard.railway.com/graphql/v2) the harness
// reads: `deployment(id)` and the Deployment fields of its query, with Railway's DeploymentStatus
// enum in full. Queries are validated and executed against it by graphql-js, so a field the
// harness asks for that Railway does not have fails here as it would there.
import { buildSchema } from "graphql";

export const DEPLOYMENT_STATUSES = [
  "BUILDING",
  "CRASHED",
  "DEPLOYING",
  "FAILED",
  "INITIALIZING",
  "NEEDS_APPROVAL",
  "QUEUED",
  "REMOVED",
  "REMOVING",
  "SKIPPED",
  "SLEEPING",
  "SUCCESS",
  "WAITING",
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const railwaySchema = buildSchema(`
  scalar DateTime

  enum DeploymentStatus { ${DEPLOYMENT_STATUSES.join(" ")} }

  type Deployment {
    id: String!
    status: DeploymentStatus!
    deploymentStopped: Boolean!
    projectId: String!
    environmentId: String!
    serviceId: String!
    createdAt: DateTime!
    staticUrl: String
    url: String
    canRedeploy: Boolean!
    canRollback: Boolean!
  }

  type Query {
    deployment(id: String!): Deployment!
  }
`);

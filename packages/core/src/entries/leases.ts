// Environment leases as the console reads them: lease records, metadata, a failed lease's source.
export {
  confirmedStopReceipt,
  LEASE_METADATA_KEYS,
  readIsolated,
  readStopIntent,
  STOP_RECEIPT_SCHEMA,
} from "../leases/lease-metadata";
export { leaseRecords } from "../leases/lease-records";
export { retainLeaseOnFailure } from "../leases/retained-source";

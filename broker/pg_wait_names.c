/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_wait_names.c - PostgreSQL wait_event_info -> pg_stat_activity names.
 *
 * The tables below were derived by reading PostgreSQL's sources for each
 * supported branch; each table names the branch and files it came from
 * (the version in parentheses is the release tree that was read).
 * The 15 tables were also checked against the LLVM bitcode of a
 * PostgreSQL 15.18 server build (the same names at the same ids).
 *
 * How PostgreSQL turns wait_event_info into names (wait_event.c):
 *  - the class is the high byte; the event id is the low 16 bits;
 *  - LWLock: the id is a tranche id.  Ids below NUM_INDIVIDUAL_LWLOCKS are
 *    the individually named locks, then come the builtin tranches, and from
 *    LWTRANCHE_FIRST_USER_DEFINED on the tranches extensions register at run
 *    time: a backend that never registered one shows "extension";
 *  - Lock: the id is the LockTagType;
 *  - Activity, Client, IPC, Timeout, IO (and BufferPin in 17): the whole
 *    wait_event_info is compared with the members of an enum that starts at
 *    the class value, so the id is the position in that enum;
 *  - BufferPin in 14-16 and Extension in 14-16: one name for the class;
 *  - Extension and InjectionPoint in 17: id 0 of Extension is "Extension",
 *    every other id is a name an extension registered at run time, which
 *    only the server knows.
 * Where PostgreSQL would print a placeholder ("???", "unknown wait event",
 * "<unassigned:N>" for an unused individual LWLock number in 14-16) or a
 * name only the server knows, these functions return NULL instead.
 *
 * Minor releases only ever append events to a class (ids must not move), so
 * an event added after the tree that was read shows as a raw number.  One
 * such event is known: WalReceiverUpstreamCatchup (IPC), added by a fix
 * released in 14.24, 15.19, 16.15 and 17.11.  Its id was not read from a
 * source, so it is left out.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "broker/pg_wait_names.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Activity ---- */

/*
 * WaitEventActivity, class PG_WAIT_ACTIVITY.
 * Derived from REL_14_STABLE (14.13):
 * enum WaitEventActivity in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const activity_14[] = {
	[0] = "ArchiverMain",
	[1] = "AutoVacuumMain",
	[2] = "BgWriterHibernate",
	[3] = "BgWriterMain",
	[4] = "CheckpointerMain",
	[5] = "LogicalApplyMain",
	[6] = "LogicalLauncherMain",
	[7] = "PgStatMain",
	[8] = "RecoveryWalStream",
	[9] = "SysLoggerMain",
	[10] = "WalReceiverMain",
	[11] = "WalSenderMain",
	[12] = "WalWriterMain",
};

/*
 * WaitEventActivity, class PG_WAIT_ACTIVITY.
 * Derived from REL_15_STABLE (15.15):
 * enum WaitEventActivity in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const activity_15[] = {
	[0] = "ArchiverMain",
	[1] = "AutoVacuumMain",
	[2] = "BgWriterHibernate",
	[3] = "BgWriterMain",
	[4] = "CheckpointerMain",
	[5] = "LogicalApplyMain",
	[6] = "LogicalLauncherMain",
	[7] = "RecoveryWalStream",
	[8] = "SysLoggerMain",
	[9] = "WalReceiverMain",
	[10] = "WalSenderMain",
	[11] = "WalWriterMain",
};

/*
 * WaitEventActivity, class PG_WAIT_ACTIVITY.
 * Derived from REL_16_STABLE (16.2):
 * enum WaitEventActivity in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const activity_16[] = {
	[0] = "ArchiverMain",
	[1] = "AutoVacuumMain",
	[2] = "BgWriterHibernate",
	[3] = "BgWriterMain",
	[4] = "CheckpointerMain",
	[5] = "LogicalApplyMain",
	[6] = "LogicalLauncherMain",
	[7] = "LogicalParallelApplyMain",
	[8] = "RecoveryWalStream",
	[9] = "SysLoggerMain",
	[10] = "WalReceiverMain",
	[11] = "WalSenderMain",
	[12] = "WalWriterMain",
};

/*
 * WaitEventActivity, class PG_WAIT_ACTIVITY.
 * Derived from REL_17_STABLE (17.4):
 * src/backend/utils/activity/wait_event_names.txt, section WaitEventActivity.
 * The generated enum sorts the first column case-insensitively, so the
 * ids are positions in that sorted list (the section's
 * ABI_compatibility part, appended after it, is empty in this tree).
 */
static const char *const activity_17[] = {
	[0] = "ArchiverMain",
	[1] = "AutovacuumMain",
	[2] = "BgwriterHibernate",
	[3] = "BgwriterMain",
	[4] = "CheckpointerMain",
	[5] = "LogicalApplyMain",
	[6] = "LogicalLauncherMain",
	[7] = "LogicalParallelApplyMain",
	[8] = "RecoveryWalStream",
	[9] = "ReplicationSlotsyncMain",
	[10] = "ReplicationSlotsyncShutdown",
	[11] = "SysloggerMain",
	[12] = "WalReceiverMain",
	[13] = "WalSenderMain",
	[14] = "WalSummarizerWal",
	[15] = "WalWriterMain",
};

/* ---- Client ---- */

/*
 * WaitEventClient, class PG_WAIT_CLIENT.
 * Derived from REL_14_STABLE (14.13), REL_15_STABLE (15.15) and
 * REL_16_STABLE (16.2):
 * enum WaitEventClient in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 * Identical in 14, 15 and 16, so shared.
 */
static const char *const client_14_16[] = {
	[0] = "ClientRead",
	[1] = "ClientWrite",
	[2] = "GSSOpenServer",
	[3] = "LibPQWalReceiverConnect",
	[4] = "LibPQWalReceiverReceive",
	[5] = "SSLOpenServer",
	[6] = "WalSenderWaitForWAL",
	[7] = "WalSenderWriteData",
};

/*
 * WaitEventClient, class PG_WAIT_CLIENT.
 * Derived from REL_17_STABLE (17.4):
 * src/backend/utils/activity/wait_event_names.txt, section WaitEventClient.
 * The generated enum sorts the first column case-insensitively, so the
 * ids are positions in that sorted list (the section's
 * ABI_compatibility part, appended after it, is empty in this tree).
 */
static const char *const client_17[] = {
	[0] = "ClientRead",
	[1] = "ClientWrite",
	[2] = "GssOpenServer",
	[3] = "LibpqwalreceiverConnect",
	[4] = "LibpqwalreceiverReceive",
	[5] = "SslOpenServer",
	[6] = "WaitForStandbyConfirmation",
	[7] = "WalSenderWaitForWal",
	[8] = "WalSenderWriteData",
};

/* ---- IPC ---- */

/*
 * WaitEventIPC, class PG_WAIT_IPC.
 * Derived from REL_14_STABLE (14.13):
 * enum WaitEventIPC in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const ipc_14[] = {
	[0] = "AppendReady",
	[1] = "BackendTermination",
	[2] = "BackupWaitWalArchive",
	[3] = "BgWorkerShutdown",
	[4] = "BgWorkerStartup",
	[5] = "BtreePage",
	[6] = "BufferIO",
	[7] = "CheckpointDone",
	[8] = "CheckpointStart",
	[9] = "ExecuteGather",
	[10] = "HashBatchAllocate",
	[11] = "HashBatchElect",
	[12] = "HashBatchLoad",
	[13] = "HashBuildAllocate",
	[14] = "HashBuildElect",
	[15] = "HashBuildHashInner",
	[16] = "HashBuildHashOuter",
	[17] = "HashGrowBatchesAllocate",
	[18] = "HashGrowBatchesDecide",
	[19] = "HashGrowBatchesElect",
	[20] = "HashGrowBatchesFinish",
	[21] = "HashGrowBatchesRepartition",
	[22] = "HashGrowBucketsAllocate",
	[23] = "HashGrowBucketsElect",
	[24] = "HashGrowBucketsReinsert",
	[25] = "LogicalSyncData",
	[26] = "LogicalSyncStateChange",
	[27] = "MessageQueueInternal",
	[28] = "MessageQueuePutMessage",
	[29] = "MessageQueueReceive",
	[30] = "MessageQueueSend",
	[31] = "ParallelBitmapScan",
	[32] = "ParallelCreateIndexScan",
	[33] = "ParallelFinish",
	[34] = "ProcArrayGroupUpdate",
	[35] = "ProcSignalBarrier",
	[36] = "Promote",
	[37] = "RecoveryConflictSnapshot",
	[38] = "RecoveryConflictTablespace",
	[39] = "RecoveryPause",
	[40] = "ReplicationOriginDrop",
	[41] = "ReplicationSlotDrop",
	[42] = "SafeSnapshot",
	[43] = "SyncRep",
	[44] = "WalReceiverExit",
	[45] = "WalReceiverWaitStart",
	[46] = "XactGroupUpdate",
};

/*
 * WaitEventIPC, class PG_WAIT_IPC.
 * Derived from REL_15_STABLE (15.15):
 * enum WaitEventIPC in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const ipc_15[] = {
	[0] = "AppendReady",
	[1] = "ArchiveCleanupCommand",
	[2] = "ArchiveCommand",
	[3] = "BackendTermination",
	[4] = "BackupWaitWalArchive",
	[5] = "BgWorkerShutdown",
	[6] = "BgWorkerStartup",
	[7] = "BtreePage",
	[8] = "BufferIO",
	[9] = "CheckpointDone",
	[10] = "CheckpointStart",
	[11] = "ExecuteGather",
	[12] = "HashBatchAllocate",
	[13] = "HashBatchElect",
	[14] = "HashBatchLoad",
	[15] = "HashBuildAllocate",
	[16] = "HashBuildElect",
	[17] = "HashBuildHashInner",
	[18] = "HashBuildHashOuter",
	[19] = "HashGrowBatchesAllocate",
	[20] = "HashGrowBatchesDecide",
	[21] = "HashGrowBatchesElect",
	[22] = "HashGrowBatchesFinish",
	[23] = "HashGrowBatchesRepartition",
	[24] = "HashGrowBucketsAllocate",
	[25] = "HashGrowBucketsElect",
	[26] = "HashGrowBucketsReinsert",
	[27] = "LogicalSyncData",
	[28] = "LogicalSyncStateChange",
	[29] = "MessageQueueInternal",
	[30] = "MessageQueuePutMessage",
	[31] = "MessageQueueReceive",
	[32] = "MessageQueueSend",
	[33] = "ParallelBitmapScan",
	[34] = "ParallelCreateIndexScan",
	[35] = "ParallelFinish",
	[36] = "ProcArrayGroupUpdate",
	[37] = "ProcSignalBarrier",
	[38] = "Promote",
	[39] = "RecoveryConflictSnapshot",
	[40] = "RecoveryConflictTablespace",
	[41] = "RecoveryEndCommand",
	[42] = "RecoveryPause",
	[43] = "ReplicationOriginDrop",
	[44] = "ReplicationSlotDrop",
	[45] = "RestoreCommand",
	[46] = "SafeSnapshot",
	[47] = "SyncRep",
	[48] = "WalReceiverExit",
	[49] = "WalReceiverWaitStart",
	[50] = "XactGroupUpdate",
};

/*
 * WaitEventIPC, class PG_WAIT_IPC.
 * Derived from REL_16_STABLE (16.2):
 * enum WaitEventIPC in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const ipc_16[] = {
	[0] = "AppendReady",
	[1] = "ArchiveCleanupCommand",
	[2] = "ArchiveCommand",
	[3] = "BackendTermination",
	[4] = "BackupWaitWalArchive",
	[5] = "BgWorkerShutdown",
	[6] = "BgWorkerStartup",
	[7] = "BtreePage",
	[8] = "BufferIO",
	[9] = "CheckpointDone",
	[10] = "CheckpointStart",
	[11] = "ExecuteGather",
	[12] = "HashBatchAllocate",
	[13] = "HashBatchElect",
	[14] = "HashBatchLoad",
	[15] = "HashBuildAllocate",
	[16] = "HashBuildElect",
	[17] = "HashBuildHashInner",
	[18] = "HashBuildHashOuter",
	[19] = "HashGrowBatchesDecide",
	[20] = "HashGrowBatchesElect",
	[21] = "HashGrowBatchesFinish",
	[22] = "HashGrowBatchesReallocate",
	[23] = "HashGrowBatchesRepartition",
	[24] = "HashGrowBucketsElect",
	[25] = "HashGrowBucketsReallocate",
	[26] = "HashGrowBucketsReinsert",
	[27] = "LogicalApplySendData",
	[28] = "LogicalParallelApplyStateChange",
	[29] = "LogicalSyncData",
	[30] = "LogicalSyncStateChange",
	[31] = "MessageQueueInternal",
	[32] = "MessageQueuePutMessage",
	[33] = "MessageQueueReceive",
	[34] = "MessageQueueSend",
	[35] = "ParallelBitmapScan",
	[36] = "ParallelCreateIndexScan",
	[37] = "ParallelFinish",
	[38] = "ProcArrayGroupUpdate",
	[39] = "ProcSignalBarrier",
	[40] = "Promote",
	[41] = "RecoveryConflictSnapshot",
	[42] = "RecoveryConflictTablespace",
	[43] = "RecoveryEndCommand",
	[44] = "RecoveryPause",
	[45] = "ReplicationOriginDrop",
	[46] = "ReplicationSlotDrop",
	[47] = "RestoreCommand",
	[48] = "SafeSnapshot",
	[49] = "SyncRep",
	[50] = "WalReceiverExit",
	[51] = "WalReceiverWaitStart",
	[52] = "XactGroupUpdate",
};

/*
 * WaitEventIPC, class PG_WAIT_IPC.
 * Derived from REL_17_STABLE (17.4):
 * src/backend/utils/activity/wait_event_names.txt, section WaitEventIPC.
 * The generated enum sorts the first column case-insensitively, so the
 * ids are positions in that sorted list (the section's
 * ABI_compatibility part, appended after it, is empty in this tree).
 */
static const char *const ipc_17[] = {
	[0] = "AppendReady",
	[1] = "ArchiveCleanupCommand",
	[2] = "ArchiveCommand",
	[3] = "BackendTermination",
	[4] = "BackupWaitWalArchive",
	[5] = "BgworkerShutdown",
	[6] = "BgworkerStartup",
	[7] = "BtreePage",
	[8] = "BufferIo",
	[9] = "CheckpointDelayComplete",
	[10] = "CheckpointDelayStart",
	[11] = "CheckpointDone",
	[12] = "CheckpointStart",
	[13] = "ExecuteGather",
	[14] = "HashBatchAllocate",
	[15] = "HashBatchElect",
	[16] = "HashBatchLoad",
	[17] = "HashBuildAllocate",
	[18] = "HashBuildElect",
	[19] = "HashBuildHashInner",
	[20] = "HashBuildHashOuter",
	[21] = "HashGrowBatchesDecide",
	[22] = "HashGrowBatchesElect",
	[23] = "HashGrowBatchesFinish",
	[24] = "HashGrowBatchesReallocate",
	[25] = "HashGrowBatchesRepartition",
	[26] = "HashGrowBucketsElect",
	[27] = "HashGrowBucketsReallocate",
	[28] = "HashGrowBucketsReinsert",
	[29] = "LogicalApplySendData",
	[30] = "LogicalParallelApplyStateChange",
	[31] = "LogicalSyncData",
	[32] = "LogicalSyncStateChange",
	[33] = "MessageQueueInternal",
	[34] = "MessageQueuePutMessage",
	[35] = "MessageQueueReceive",
	[36] = "MessageQueueSend",
	[37] = "MultixactCreation",
	[38] = "ParallelBitmapScan",
	[39] = "ParallelCreateIndexScan",
	[40] = "ParallelFinish",
	[41] = "ProcarrayGroupUpdate",
	[42] = "ProcSignalBarrier",
	[43] = "Promote",
	[44] = "RecoveryConflictSnapshot",
	[45] = "RecoveryConflictTablespace",
	[46] = "RecoveryEndCommand",
	[47] = "RecoveryPause",
	[48] = "ReplicationOriginDrop",
	[49] = "ReplicationSlotDrop",
	[50] = "RestoreCommand",
	[51] = "SafeSnapshot",
	[52] = "SyncRep",
	[53] = "WalReceiverExit",
	[54] = "WalReceiverWaitStart",
	[55] = "WalSummaryReady",
	[56] = "XactGroupUpdate",
};

/* ---- Timeout ---- */

/*
 * WaitEventTimeout, class PG_WAIT_TIMEOUT.
 * Derived from REL_14_STABLE (14.13):
 * enum WaitEventTimeout in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const timeout_14[] = {
	[0] = "BaseBackupThrottle",
	[1] = "PgSleep",
	[2] = "RecoveryApplyDelay",
	[3] = "RecoveryRetrieveRetryInterval",
	[4] = "VacuumDelay",
	[5] = "CheckpointWriteDelay",
	[6] = "RegisterSyncRequest",
};

/*
 * WaitEventTimeout, class PG_WAIT_TIMEOUT.
 * Derived from REL_15_STABLE (15.15):
 * enum WaitEventTimeout in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const timeout_15[] = {
	[0] = "BaseBackupThrottle",
	[1] = "CheckpointWriteDelay",
	[2] = "PgSleep",
	[3] = "RecoveryApplyDelay",
	[4] = "RecoveryRetrieveRetryInterval",
	[5] = "RegisterSyncRequest",
	[6] = "VacuumDelay",
	[7] = "VacuumTruncate",
};

/*
 * WaitEventTimeout, class PG_WAIT_TIMEOUT.
 * Derived from REL_16_STABLE (16.2):
 * enum WaitEventTimeout in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const timeout_16[] = {
	[0] = "BaseBackupThrottle",
	[1] = "CheckpointWriteDelay",
	[2] = "PgSleep",
	[3] = "RecoveryApplyDelay",
	[4] = "RecoveryRetrieveRetryInterval",
	[5] = "RegisterSyncRequest",
	[6] = "SpinDelay",
	[7] = "VacuumDelay",
	[8] = "VacuumTruncate",
};

/*
 * WaitEventTimeout, class PG_WAIT_TIMEOUT.
 * Derived from REL_17_STABLE (17.4):
 * src/backend/utils/activity/wait_event_names.txt, section WaitEventTimeout.
 * The generated enum sorts the first column case-insensitively, so the
 * ids are positions in that sorted list (the section's
 * ABI_compatibility part, appended after it, is empty in this tree).
 */
static const char *const timeout_17[] = {
	[0] = "BaseBackupThrottle",
	[1] = "CheckpointWriteDelay",
	[2] = "PgSleep",
	[3] = "RecoveryApplyDelay",
	[4] = "RecoveryRetrieveRetryInterval",
	[5] = "RegisterSyncRequest",
	[6] = "SpinDelay",
	[7] = "VacuumDelay",
	[8] = "VacuumTruncate",
	[9] = "WalSummarizerError",
};

/* ---- IO ---- */

/*
 * WaitEventIO, class PG_WAIT_IO.
 * Derived from REL_14_STABLE (14.13):
 * enum WaitEventIO in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const io_14[] = {
	[0] = "BaseBackupRead",
	[1] = "BufFileRead",
	[2] = "BufFileWrite",
	[3] = "BufFileTruncate",
	[4] = "ControlFileRead",
	[5] = "ControlFileSync",
	[6] = "ControlFileSyncUpdate",
	[7] = "ControlFileWrite",
	[8] = "ControlFileWriteUpdate",
	[9] = "CopyFileRead",
	[10] = "CopyFileWrite",
	[11] = "DataFileExtend",
	[12] = "DataFileFlush",
	[13] = "DataFileImmediateSync",
	[14] = "DataFilePrefetch",
	[15] = "DataFileRead",
	[16] = "DataFileSync",
	[17] = "DataFileTruncate",
	[18] = "DataFileWrite",
	[19] = "DSMFillZeroWrite",
	[20] = "LockFileAddToDataDirRead",
	[21] = "LockFileAddToDataDirSync",
	[22] = "LockFileAddToDataDirWrite",
	[23] = "LockFileCreateRead",
	[24] = "LockFileCreateSync",
	[25] = "LockFileCreateWrite",
	[26] = "LockFileReCheckDataDirRead",
	[27] = "LogicalRewriteCheckpointSync",
	[28] = "LogicalRewriteMappingSync",
	[29] = "LogicalRewriteMappingWrite",
	[30] = "LogicalRewriteSync",
	[31] = "LogicalRewriteTruncate",
	[32] = "LogicalRewriteWrite",
	[33] = "RelationMapRead",
	[34] = "RelationMapSync",
	[35] = "RelationMapWrite",
	[36] = "ReorderBufferRead",
	[37] = "ReorderBufferWrite",
	[38] = "ReorderLogicalMappingRead",
	[39] = "ReplicationSlotRead",
	[40] = "ReplicationSlotRestoreSync",
	[41] = "ReplicationSlotSync",
	[42] = "ReplicationSlotWrite",
	[43] = "SLRUFlushSync",
	[44] = "SLRURead",
	[45] = "SLRUSync",
	[46] = "SLRUWrite",
	[47] = "SnapbuildRead",
	[48] = "SnapbuildSync",
	[49] = "SnapbuildWrite",
	[50] = "TimelineHistoryFileSync",
	[51] = "TimelineHistoryFileWrite",
	[52] = "TimelineHistoryRead",
	[53] = "TimelineHistorySync",
	[54] = "TimelineHistoryWrite",
	[55] = "TwophaseFileRead",
	[56] = "TwophaseFileSync",
	[57] = "TwophaseFileWrite",
	[58] = "WALSenderTimelineHistoryRead",
	[59] = "WALBootstrapSync",
	[60] = "WALBootstrapWrite",
	[61] = "WALCopyRead",
	[62] = "WALCopySync",
	[63] = "WALCopyWrite",
	[64] = "WALInitSync",
	[65] = "WALInitWrite",
	[66] = "WALRead",
	[67] = "WALSync",
	[68] = "WALSyncMethodAssign",
	[69] = "WALWrite",
	[70] = "LogicalChangesRead",
	[71] = "LogicalChangesWrite",
	[72] = "LogicalSubxactRead",
	[73] = "LogicalSubxactWrite",
};

/*
 * WaitEventIO, class PG_WAIT_IO.
 * Derived from REL_15_STABLE (15.15):
 * enum WaitEventIO in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const io_15[] = {
	[0] = "BaseBackupRead",
	[1] = "BaseBackupSync",
	[2] = "BaseBackupWrite",
	[3] = "BufFileRead",
	[4] = "BufFileWrite",
	[5] = "BufFileTruncate",
	[6] = "ControlFileRead",
	[7] = "ControlFileSync",
	[8] = "ControlFileSyncUpdate",
	[9] = "ControlFileWrite",
	[10] = "ControlFileWriteUpdate",
	[11] = "CopyFileRead",
	[12] = "CopyFileWrite",
	[13] = "DataFileExtend",
	[14] = "DataFileFlush",
	[15] = "DataFileImmediateSync",
	[16] = "DataFilePrefetch",
	[17] = "DataFileRead",
	[18] = "DataFileSync",
	[19] = "DataFileTruncate",
	[20] = "DataFileWrite",
	[21] = "DSMFillZeroWrite",
	[22] = "LockFileAddToDataDirRead",
	[23] = "LockFileAddToDataDirSync",
	[24] = "LockFileAddToDataDirWrite",
	[25] = "LockFileCreateRead",
	[26] = "LockFileCreateSync",
	[27] = "LockFileCreateWrite",
	[28] = "LockFileReCheckDataDirRead",
	[29] = "LogicalRewriteCheckpointSync",
	[30] = "LogicalRewriteMappingSync",
	[31] = "LogicalRewriteMappingWrite",
	[32] = "LogicalRewriteSync",
	[33] = "LogicalRewriteTruncate",
	[34] = "LogicalRewriteWrite",
	[35] = "RelationMapRead",
	[36] = "RelationMapSync",
	[37] = "RelationMapWrite",
	[38] = "ReorderBufferRead",
	[39] = "ReorderBufferWrite",
	[40] = "ReorderLogicalMappingRead",
	[41] = "ReplicationSlotRead",
	[42] = "ReplicationSlotRestoreSync",
	[43] = "ReplicationSlotSync",
	[44] = "ReplicationSlotWrite",
	[45] = "SLRUFlushSync",
	[46] = "SLRURead",
	[47] = "SLRUSync",
	[48] = "SLRUWrite",
	[49] = "SnapbuildRead",
	[50] = "SnapbuildSync",
	[51] = "SnapbuildWrite",
	[52] = "TimelineHistoryFileSync",
	[53] = "TimelineHistoryFileWrite",
	[54] = "TimelineHistoryRead",
	[55] = "TimelineHistorySync",
	[56] = "TimelineHistoryWrite",
	[57] = "TwophaseFileRead",
	[58] = "TwophaseFileSync",
	[59] = "TwophaseFileWrite",
	[60] = "VersionFileWrite",
	[61] = "WALSenderTimelineHistoryRead",
	[62] = "WALBootstrapSync",
	[63] = "WALBootstrapWrite",
	[64] = "WALCopyRead",
	[65] = "WALCopySync",
	[66] = "WALCopyWrite",
	[67] = "WALInitSync",
	[68] = "WALInitWrite",
	[69] = "WALRead",
	[70] = "WALSync",
	[71] = "WALSyncMethodAssign",
	[72] = "WALWrite",
	[73] = "VersionFileSync",
};

/*
 * WaitEventIO, class PG_WAIT_IO.
 * Derived from REL_16_STABLE (16.2):
 * enum WaitEventIO in src/include/utils/wait_event.h gives the ids
 * (position in the enum), src/backend/utils/activity/wait_event.c
 * the names.
 */
static const char *const io_16[] = {
	[0] = "BaseBackupRead",
	[1] = "BaseBackupSync",
	[2] = "BaseBackupWrite",
	[3] = "BufFileRead",
	[4] = "BufFileWrite",
	[5] = "BufFileTruncate",
	[6] = "ControlFileRead",
	[7] = "ControlFileSync",
	[8] = "ControlFileSyncUpdate",
	[9] = "ControlFileWrite",
	[10] = "ControlFileWriteUpdate",
	[11] = "CopyFileRead",
	[12] = "CopyFileWrite",
	[13] = "DataFileExtend",
	[14] = "DataFileFlush",
	[15] = "DataFileImmediateSync",
	[16] = "DataFilePrefetch",
	[17] = "DataFileRead",
	[18] = "DataFileSync",
	[19] = "DataFileTruncate",
	[20] = "DataFileWrite",
	[21] = "DSMAllocate",
	[22] = "DSMFillZeroWrite",
	[23] = "LockFileAddToDataDirRead",
	[24] = "LockFileAddToDataDirSync",
	[25] = "LockFileAddToDataDirWrite",
	[26] = "LockFileCreateRead",
	[27] = "LockFileCreateSync",
	[28] = "LockFileCreateWrite",
	[29] = "LockFileReCheckDataDirRead",
	[30] = "LogicalRewriteCheckpointSync",
	[31] = "LogicalRewriteMappingSync",
	[32] = "LogicalRewriteMappingWrite",
	[33] = "LogicalRewriteSync",
	[34] = "LogicalRewriteTruncate",
	[35] = "LogicalRewriteWrite",
	[36] = "RelationMapRead",
	[37] = "RelationMapReplace",
	[38] = "RelationMapWrite",
	[39] = "ReorderBufferRead",
	[40] = "ReorderBufferWrite",
	[41] = "ReorderLogicalMappingRead",
	[42] = "ReplicationSlotRead",
	[43] = "ReplicationSlotRestoreSync",
	[44] = "ReplicationSlotSync",
	[45] = "ReplicationSlotWrite",
	[46] = "SLRUFlushSync",
	[47] = "SLRURead",
	[48] = "SLRUSync",
	[49] = "SLRUWrite",
	[50] = "SnapbuildRead",
	[51] = "SnapbuildSync",
	[52] = "SnapbuildWrite",
	[53] = "TimelineHistoryFileSync",
	[54] = "TimelineHistoryFileWrite",
	[55] = "TimelineHistoryRead",
	[56] = "TimelineHistorySync",
	[57] = "TimelineHistoryWrite",
	[58] = "TwophaseFileRead",
	[59] = "TwophaseFileSync",
	[60] = "TwophaseFileWrite",
	[61] = "VersionFileWrite",
	[62] = "WALSenderTimelineHistoryRead",
	[63] = "WALBootstrapSync",
	[64] = "WALBootstrapWrite",
	[65] = "WALCopyRead",
	[66] = "WALCopySync",
	[67] = "WALCopyWrite",
	[68] = "WALInitSync",
	[69] = "WALInitWrite",
	[70] = "WALRead",
	[71] = "WALSync",
	[72] = "WALSyncMethodAssign",
	[73] = "WALWrite",
	[74] = "VersionFileSync",
};

/*
 * WaitEventIO, class PG_WAIT_IO.
 * Derived from REL_17_STABLE (17.4):
 * src/backend/utils/activity/wait_event_names.txt, section WaitEventIO.
 * The generated enum sorts the first column case-insensitively, so the
 * ids are positions in that sorted list (the section's
 * ABI_compatibility part, appended after it, is empty in this tree).
 */
static const char *const io_17[] = {
	[0] = "BasebackupRead",
	[1] = "BasebackupSync",
	[2] = "BasebackupWrite",
	[3] = "BuffileRead",
	[4] = "BuffileTruncate",
	[5] = "BuffileWrite",
	[6] = "ControlFileRead",
	[7] = "ControlFileSync",
	[8] = "ControlFileSyncUpdate",
	[9] = "ControlFileWrite",
	[10] = "ControlFileWriteUpdate",
	[11] = "CopyFileRead",
	[12] = "CopyFileWrite",
	[13] = "DataFileExtend",
	[14] = "DataFileFlush",
	[15] = "DataFileImmediateSync",
	[16] = "DataFilePrefetch",
	[17] = "DataFileRead",
	[18] = "DataFileSync",
	[19] = "DataFileTruncate",
	[20] = "DataFileWrite",
	[21] = "DsmAllocate",
	[22] = "DsmFillZeroWrite",
	[23] = "LockFileAddtodatadirRead",
	[24] = "LockFileAddtodatadirSync",
	[25] = "LockFileAddtodatadirWrite",
	[26] = "LockFileCreateRead",
	[27] = "LockFileCreateSync",
	[28] = "LockFileCreateWrite",
	[29] = "LockFileRecheckdatadirRead",
	[30] = "LogicalRewriteCheckpointSync",
	[31] = "LogicalRewriteMappingSync",
	[32] = "LogicalRewriteMappingWrite",
	[33] = "LogicalRewriteSync",
	[34] = "LogicalRewriteTruncate",
	[35] = "LogicalRewriteWrite",
	[36] = "RelationMapRead",
	[37] = "RelationMapReplace",
	[38] = "RelationMapWrite",
	[39] = "ReorderBufferRead",
	[40] = "ReorderBufferWrite",
	[41] = "ReorderLogicalMappingRead",
	[42] = "ReplicationSlotRead",
	[43] = "ReplicationSlotRestoreSync",
	[44] = "ReplicationSlotSync",
	[45] = "ReplicationSlotWrite",
	[46] = "SlruFlushSync",
	[47] = "SlruRead",
	[48] = "SlruSync",
	[49] = "SlruWrite",
	[50] = "SnapbuildRead",
	[51] = "SnapbuildSync",
	[52] = "SnapbuildWrite",
	[53] = "TimelineHistoryFileSync",
	[54] = "TimelineHistoryFileWrite",
	[55] = "TimelineHistoryRead",
	[56] = "TimelineHistorySync",
	[57] = "TimelineHistoryWrite",
	[58] = "TwophaseFileRead",
	[59] = "TwophaseFileSync",
	[60] = "TwophaseFileWrite",
	[61] = "VersionFileSync",
	[62] = "VersionFileWrite",
	[63] = "WalsenderTimelineHistoryRead",
	[64] = "WalBootstrapSync",
	[65] = "WalBootstrapWrite",
	[66] = "WalCopyRead",
	[67] = "WalCopySync",
	[68] = "WalCopyWrite",
	[69] = "WalInitSync",
	[70] = "WalInitWrite",
	[71] = "WalRead",
	[72] = "WalSummaryRead",
	[73] = "WalSummaryWrite",
	[74] = "WalSync",
	[75] = "WalSyncMethodAssign",
	[76] = "WalWrite",
};

/* ---- BufferPin ---- */

/*
 * WaitEventBufferPin, class PG_WAIT_BUFFERPIN.
 * Derived from REL_17_STABLE (17.4): src/backend/utils/activity/
 * wait_event_names.txt, section WaitEventBufferPin.  In 14-16 there is no
 * table: wait_event.c names every BufferPin wait "BufferPin".
 */
static const char *const buffer_pin_17[] = {
	[0] = "BufferPin",
};

/* ---- LWLock: individual locks ---- */

/*
 * Individual LWLocks; the wait event id is the lock's number.
 * Derived from REL_14_STABLE (14.13), REL_15_STABLE (15.15) and
 * REL_16_STABLE (16.2):
 * src/backend/storage/lmgr/lwlocknames.txt (name without the "Lock"
 * suffix, as generate-lwlocknames.pl strips it).
 * Unused numbers (0, 10, 45) stay NULL.
 * Identical in 14, 15 and 16, so shared.
 */
static const char *const lwlock_14_16[] = {
	[1] = "ShmemIndex",
	[2] = "OidGen",
	[3] = "XidGen",
	[4] = "ProcArray",
	[5] = "SInvalRead",
	[6] = "SInvalWrite",
	[7] = "WALBufMapping",
	[8] = "WALWrite",
	[9] = "ControlFile",
	[11] = "XactSLRU",
	[12] = "SubtransSLRU",
	[13] = "MultiXactGen",
	[14] = "MultiXactOffsetSLRU",
	[15] = "MultiXactMemberSLRU",
	[16] = "RelCacheInit",
	[17] = "CheckpointerComm",
	[18] = "TwoPhaseState",
	[19] = "TablespaceCreate",
	[20] = "BtreeVacuum",
	[21] = "AddinShmemInit",
	[22] = "Autovacuum",
	[23] = "AutovacuumSchedule",
	[24] = "SyncScan",
	[25] = "RelationMapping",
	[26] = "NotifySLRU",
	[27] = "NotifyQueue",
	[28] = "SerializableXactHash",
	[29] = "SerializableFinishedList",
	[30] = "SerializablePredicateList",
	[31] = "SerialSLRU",
	[32] = "SyncRep",
	[33] = "BackgroundWorker",
	[34] = "DynamicSharedMemoryControl",
	[35] = "AutoFile",
	[36] = "ReplicationSlotAllocation",
	[37] = "ReplicationSlotControl",
	[38] = "CommitTsSLRU",
	[39] = "CommitTs",
	[40] = "ReplicationOrigin",
	[41] = "MultiXactTruncation",
	[42] = "OldSnapshotTimeMap",
	[43] = "LogicalRepWorker",
	[44] = "XactTruncation",
	[46] = "WrapLimitsVacuum",
	[47] = "NotifyQueueTail",
};

/*
 * Individual LWLocks; the wait event id is the lock's number.
 * Derived from REL_17_STABLE (17.4):
 * src/include/storage/lwlocklist.h (lwlocknames.txt is gone in 17).
 * Unused numbers (0, 10, 11, 12, 14, 15, 26, 31, 38, 42, 45) stay NULL.
 */
static const char *const lwlock_17[] = {
	[1] = "ShmemIndex",
	[2] = "OidGen",
	[3] = "XidGen",
	[4] = "ProcArray",
	[5] = "SInvalRead",
	[6] = "SInvalWrite",
	[7] = "WALBufMapping",
	[8] = "WALWrite",
	[9] = "ControlFile",
	[13] = "MultiXactGen",
	[16] = "RelCacheInit",
	[17] = "CheckpointerComm",
	[18] = "TwoPhaseState",
	[19] = "TablespaceCreate",
	[20] = "BtreeVacuum",
	[21] = "AddinShmemInit",
	[22] = "Autovacuum",
	[23] = "AutovacuumSchedule",
	[24] = "SyncScan",
	[25] = "RelationMapping",
	[27] = "NotifyQueue",
	[28] = "SerializableXactHash",
	[29] = "SerializableFinishedList",
	[30] = "SerializablePredicateList",
	[32] = "SyncRep",
	[33] = "BackgroundWorker",
	[34] = "DynamicSharedMemoryControl",
	[35] = "AutoFile",
	[36] = "ReplicationSlotAllocation",
	[37] = "ReplicationSlotControl",
	[39] = "CommitTs",
	[40] = "ReplicationOrigin",
	[41] = "MultiXactTruncation",
	[43] = "LogicalRepWorker",
	[44] = "XactTruncation",
	[46] = "WrapLimitsVacuum",
	[47] = "NotifyQueueTail",
	[48] = "WaitEventCustom",
	[49] = "WALSummarizer",
	[50] = "DSMRegistry",
	[51] = "InjectionPoint",
	[52] = "SerialControl",
};

/* ---- LWLock: builtin tranches ---- */

/*
 * Builtin LWLock tranches; ids continue after the individual locks, from
 * NUM_INDIVIDUAL_LWLOCKS (48) up to LWTRANCHE_FIRST_USER_DEFINED (72).
 * Derived from REL_14_STABLE (14.13): enum BuiltinTrancheIds in
 * src/include/storage/lwlock.h for the order, BuiltinTrancheNames[] in
 * src/backend/storage/lmgr/lwlock.c for the names.
 */
static const char *const tranche_14[] = {
	"XactBuffer",			/* 48 */
	"CommitTsBuffer",		/* 49 */
	"SubtransBuffer",		/* 50 */
	"MultiXactOffsetBuffer",	/* 51 */
	"MultiXactMemberBuffer",	/* 52 */
	"NotifyBuffer",			/* 53 */
	"SerialBuffer",			/* 54 */
	"WALInsert",			/* 55 */
	"BufferContent",		/* 56 */
	"ReplicationOriginState",	/* 57 */
	"ReplicationSlotIO",		/* 58 */
	"LockFastPath",			/* 59 */
	"BufferMapping",		/* 60 */
	"LockManager",			/* 61 */
	"PredicateLockManager",		/* 62 */
	"ParallelHashJoin",		/* 63 */
	"ParallelQueryDSA",		/* 64 */
	"PerSessionDSA",		/* 65 */
	"PerSessionRecordType",		/* 66 */
	"PerSessionRecordTypmod",	/* 67 */
	"SharedTupleStore",		/* 68 */
	"SharedTidBitmap",		/* 69 */
	"ParallelAppend",		/* 70 */
	"PerXactPredicateList",		/* 71 */
};

/*
 * Builtin LWLock tranches; ids continue after the individual locks, from
 * NUM_INDIVIDUAL_LWLOCKS (48) up to LWTRANCHE_FIRST_USER_DEFINED (75).
 * Derived from REL_15_STABLE (15.15): enum BuiltinTrancheIds in
 * src/include/storage/lwlock.h for the order, BuiltinTrancheNames[] in
 * src/backend/storage/lmgr/lwlock.c for the names.
 */
static const char *const tranche_15[] = {
	"XactBuffer",			/* 48 */
	"CommitTsBuffer",		/* 49 */
	"SubtransBuffer",		/* 50 */
	"MultiXactOffsetBuffer",	/* 51 */
	"MultiXactMemberBuffer",	/* 52 */
	"NotifyBuffer",			/* 53 */
	"SerialBuffer",			/* 54 */
	"WALInsert",			/* 55 */
	"BufferContent",		/* 56 */
	"ReplicationOriginState",	/* 57 */
	"ReplicationSlotIO",		/* 58 */
	"LockFastPath",			/* 59 */
	"BufferMapping",		/* 60 */
	"LockManager",			/* 61 */
	"PredicateLockManager",		/* 62 */
	"ParallelHashJoin",		/* 63 */
	"ParallelQueryDSA",		/* 64 */
	"PerSessionDSA",		/* 65 */
	"PerSessionRecordType",		/* 66 */
	"PerSessionRecordTypmod",	/* 67 */
	"SharedTupleStore",		/* 68 */
	"SharedTidBitmap",		/* 69 */
	"ParallelAppend",		/* 70 */
	"PerXactPredicateList",		/* 71 */
	"PgStatsDSA",			/* 72 */
	"PgStatsHash",			/* 73 */
	"PgStatsData",			/* 74 */
};

/*
 * Builtin LWLock tranches; ids continue after the individual locks, from
 * NUM_INDIVIDUAL_LWLOCKS (48) up to LWTRANCHE_FIRST_USER_DEFINED (77).
 * Derived from REL_16_STABLE (16.2): enum BuiltinTrancheIds in
 * src/include/storage/lwlock.h for the order, BuiltinTrancheNames[] in
 * src/backend/storage/lmgr/lwlock.c for the names.
 */
static const char *const tranche_16[] = {
	"XactBuffer",			/* 48 */
	"CommitTsBuffer",		/* 49 */
	"SubtransBuffer",		/* 50 */
	"MultiXactOffsetBuffer",	/* 51 */
	"MultiXactMemberBuffer",	/* 52 */
	"NotifyBuffer",			/* 53 */
	"SerialBuffer",			/* 54 */
	"WALInsert",			/* 55 */
	"BufferContent",		/* 56 */
	"ReplicationOriginState",	/* 57 */
	"ReplicationSlotIO",		/* 58 */
	"LockFastPath",			/* 59 */
	"BufferMapping",		/* 60 */
	"LockManager",			/* 61 */
	"PredicateLockManager",		/* 62 */
	"ParallelHashJoin",		/* 63 */
	"ParallelQueryDSA",		/* 64 */
	"PerSessionDSA",		/* 65 */
	"PerSessionRecordType",		/* 66 */
	"PerSessionRecordTypmod",	/* 67 */
	"SharedTupleStore",		/* 68 */
	"SharedTidBitmap",		/* 69 */
	"ParallelAppend",		/* 70 */
	"PerXactPredicateList",		/* 71 */
	"PgStatsDSA",			/* 72 */
	"PgStatsHash",			/* 73 */
	"PgStatsData",			/* 74 */
	"LogicalRepLauncherDSA",	/* 75 */
	"LogicalRepLauncherHash",	/* 76 */
};

/*
 * Builtin LWLock tranches; ids continue after the individual locks, from
 * NUM_INDIVIDUAL_LWLOCKS (53) up to LWTRANCHE_FIRST_USER_DEFINED (92).
 * Derived from REL_17_STABLE (17.4): enum BuiltinTrancheIds in
 * src/include/storage/lwlock.h for the order, BuiltinTrancheNames[] in
 * src/backend/storage/lmgr/lwlock.c for the names (17 uses designated
 * initializers there, so names were matched to the enum by symbol, not
 * by position: e.g. LWTRANCHE_MULTIXACTMEMBER_SLRU comes before
 * LWTRANCHE_MULTIXACTOFFSET_SLRU).
 */
static const char *const tranche_17[] = {
	"XactBuffer",			/* 53 */
	"CommitTsBuffer",		/* 54 */
	"SubtransBuffer",		/* 55 */
	"MultiXactOffsetBuffer",	/* 56 */
	"MultiXactMemberBuffer",	/* 57 */
	"NotifyBuffer",			/* 58 */
	"SerialBuffer",			/* 59 */
	"WALInsert",			/* 60 */
	"BufferContent",		/* 61 */
	"ReplicationOriginState",	/* 62 */
	"ReplicationSlotIO",		/* 63 */
	"LockFastPath",			/* 64 */
	"BufferMapping",		/* 65 */
	"LockManager",			/* 66 */
	"PredicateLockManager",		/* 67 */
	"ParallelHashJoin",		/* 68 */
	"ParallelQueryDSA",		/* 69 */
	"PerSessionDSA",		/* 70 */
	"PerSessionRecordType",		/* 71 */
	"PerSessionRecordTypmod",	/* 72 */
	"SharedTupleStore",		/* 73 */
	"SharedTidBitmap",		/* 74 */
	"ParallelAppend",		/* 75 */
	"PerXactPredicateList",		/* 76 */
	"PgStatsDSA",			/* 77 */
	"PgStatsHash",			/* 78 */
	"PgStatsData",			/* 79 */
	"LogicalRepLauncherDSA",	/* 80 */
	"LogicalRepLauncherHash",	/* 81 */
	"DSMRegistryDSA",		/* 82 */
	"DSMRegistryHash",		/* 83 */
	"CommitTsSLRU",			/* 84 */
	"MultixactMemberSLRU",		/* 85 */
	"MultixactOffsetSLRU",		/* 86 */
	"NotifySLRU",			/* 87 */
	"SerialSLRU",			/* 88 */
	"SubtransSLRU",			/* 89 */
	"XactSLRU",			/* 90 */
	"ParallelVacuumDSA",		/* 91 */
};

/* ---- Lock: heavyweight lock tag types ---- */

/*
 * Lock wait events; the event id is the LockTagType.
 * Derived from REL_14_STABLE (14.13) and REL_15_STABLE (15.15):
 * enum LockTagType in src/include/storage/lock.h for the order,
 * LockTagTypeNames[] in src/backend/utils/adt/lockfuncs.c for the names
 * (GetLockNameFromTagType() in lmgr.c indexes it).
 * Identical in 14 and 15, so shared.
 */
static const char *const lock_14_15[] = {
	[0] = "relation",
	[1] = "extend",
	[2] = "frozenid",
	[3] = "page",
	[4] = "tuple",
	[5] = "transactionid",
	[6] = "virtualxid",
	[7] = "spectoken",
	[8] = "object",
	[9] = "userlock",
	[10] = "advisory",
};

/*
 * Lock wait events; the event id is the LockTagType.
 * Derived from REL_16_STABLE (16.2) and REL_17_STABLE (17.4):
 * enum LockTagType in src/include/storage/lock.h for the order,
 * LockTagTypeNames[] in src/backend/utils/adt/lockfuncs.c for the names
 * (GetLockNameFromTagType() in lmgr.c indexes it).
 * Identical in 16 and 17, so shared.
 */
static const char *const lock_16_17[] = {
	[0] = "relation",
	[1] = "extend",
	[2] = "frozenid",
	[3] = "page",
	[4] = "tuple",
	[5] = "transactionid",
	[6] = "virtualxid",
	[7] = "spectoken",
	[8] = "object",
	[9] = "userlock",
	[10] = "advisory",
	[11] = "applytransaction",
};

/* ---- per-version table sets ---- */

struct name_table {
	const char *const *names;
	unsigned int len;
};

#define TABLE(a) { (a), ARRAY_SIZE(a) }
#define NO_TABLE { NULL, 0 }

struct pg_wait_tables {
	int major;
	struct name_table lwlock;	/* index = LWLock id; len = NUM_INDIVIDUAL_LWLOCKS */
	struct name_table tranche;	/* index = LWLock id - lwlock.len */
	struct name_table lock;		/* index = LockTagType */
	struct name_table activity;
	struct name_table client;
	struct name_table ipc;
	struct name_table timeout;
	struct name_table io;
	struct name_table buffer_pin;	/* NO_TABLE: every id is "BufferPin" */
	int custom_events;		/* 17: Extension/InjectionPoint ids are registered names */
};

/* NUM_INDIVIDUAL_LWLOCKS and LWTRANCHE_FIRST_USER_DEFINED per version. */
_Static_assert(ARRAY_SIZE(lwlock_14_16) == 48, "NUM_INDIVIDUAL_LWLOCKS 14-16");
_Static_assert(ARRAY_SIZE(lwlock_17) == 53, "NUM_INDIVIDUAL_LWLOCKS 17");
_Static_assert(48 + ARRAY_SIZE(tranche_14) == 72,
	       "LWTRANCHE_FIRST_USER_DEFINED 14");
_Static_assert(48 + ARRAY_SIZE(tranche_15) == 75,
	       "LWTRANCHE_FIRST_USER_DEFINED 15");
_Static_assert(48 + ARRAY_SIZE(tranche_16) == 77,
	       "LWTRANCHE_FIRST_USER_DEFINED 16");
_Static_assert(53 + ARRAY_SIZE(tranche_17) == 92,
	       "LWTRANCHE_FIRST_USER_DEFINED 17");

static const struct pg_wait_tables pg_wait_tables[] = {
	{
		.major = 14,
		.lwlock = TABLE(lwlock_14_16),
		.tranche = TABLE(tranche_14),
		.lock = TABLE(lock_14_15),
		.activity = TABLE(activity_14),
		.client = TABLE(client_14_16),
		.ipc = TABLE(ipc_14),
		.timeout = TABLE(timeout_14),
		.io = TABLE(io_14),
		.buffer_pin = NO_TABLE,
		.custom_events = 0,
	},
	{
		.major = 15,
		.lwlock = TABLE(lwlock_14_16),
		.tranche = TABLE(tranche_15),
		.lock = TABLE(lock_14_15),
		.activity = TABLE(activity_15),
		.client = TABLE(client_14_16),
		.ipc = TABLE(ipc_15),
		.timeout = TABLE(timeout_15),
		.io = TABLE(io_15),
		.buffer_pin = NO_TABLE,
		.custom_events = 0,
	},
	{
		.major = 16,
		.lwlock = TABLE(lwlock_14_16),
		.tranche = TABLE(tranche_16),
		.lock = TABLE(lock_16_17),
		.activity = TABLE(activity_16),
		.client = TABLE(client_14_16),
		.ipc = TABLE(ipc_16),
		.timeout = TABLE(timeout_16),
		.io = TABLE(io_16),
		.buffer_pin = NO_TABLE,
		.custom_events = 0,
	},
	{
		.major = 17,
		.lwlock = TABLE(lwlock_17),
		.tranche = TABLE(tranche_17),
		.lock = TABLE(lock_16_17),
		.activity = TABLE(activity_17),
		.client = TABLE(client_17),
		.ipc = TABLE(ipc_17),
		.timeout = TABLE(timeout_17),
		.io = TABLE(io_17),
		.buffer_pin = TABLE(buffer_pin_17),
		.custom_events = 1,
	},
};

static const struct pg_wait_tables *tables_for(int pg_major)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pg_wait_tables); i++)
		if (pg_wait_tables[i].major == pg_major)
			return &pg_wait_tables[i];
	return NULL;
}

static const char *lookup(const struct name_table *t, uint32_t id)
{
	if (id >= t->len)
		return NULL;
	return t->names[id];	/* NULL for a gap */
}

/*
 * Classes whose events are enum members starting at the class value:
 * PostgreSQL compares the whole wait_event_info, so bits 16..23 must be 0.
 */
static const char *lookup_enum(const struct name_table *t, uint32_t info)
{
	if (info & 0x00FF0000u)
		return NULL;
	return lookup(t, info & 0xFFFFu);
}

static const char *lwlock_name(const struct pg_wait_tables *v, uint16_t id)
{
	if (id < v->lwlock.len)
		return v->lwlock.names[id];	/* NULL for an unused number */
	if (id - v->lwlock.len < v->tranche.len)
		return v->tranche.names[id - v->lwlock.len];
	/* A tranche an extension registers at run time. */
	return "extension";
}

int pg_wait_names_known_major(int pg_major)
{
	return tables_for(pg_major) != NULL;
}

const char *pg_wait_event_type(int pg_major, uint32_t wait_event_info)
{
	const struct pg_wait_tables *v = tables_for(pg_major);

	if (!v || wait_event_info == 0)
		return NULL;

	switch (wait_event_info >> 24) {
	case PG_CLASS_LWLOCK:
		return "LWLock";
	case PG_CLASS_LOCK:
		return "Lock";
	case PG_CLASS_BUFFERPIN:
		return "BufferPin";
	case PG_CLASS_ACTIVITY:
		return "Activity";
	case PG_CLASS_CLIENT:
		return "Client";
	case PG_CLASS_EXTENSION:
		return "Extension";
	case PG_CLASS_IPC:
		return "IPC";
	case PG_CLASS_TIMEOUT:
		return "Timeout";
	case PG_CLASS_IO:
		return "IO";
	case PG_CLASS_INJECTION_POINT:
		return v->custom_events ? "InjectionPoint" : NULL;
	default:
		return NULL;
	}
}

const char *pg_wait_event_name(int pg_major, uint32_t wait_event_info)
{
	const struct pg_wait_tables *v = tables_for(pg_major);
	uint16_t id = (uint16_t)(wait_event_info & 0xFFFFu);

	if (!v || wait_event_info == 0)
		return NULL;

	switch (wait_event_info >> 24) {
	case PG_CLASS_LWLOCK:
		return lwlock_name(v, id);
	case PG_CLASS_LOCK:
		return lookup(&v->lock, id);
	case PG_CLASS_BUFFERPIN:
		if (!v->buffer_pin.names)
			return "BufferPin";
		return lookup_enum(&v->buffer_pin, wait_event_info);
	case PG_CLASS_ACTIVITY:
		return lookup_enum(&v->activity, wait_event_info);
	case PG_CLASS_CLIENT:
		return lookup_enum(&v->client, wait_event_info);
	case PG_CLASS_EXTENSION:
		/* 17: only the built-in id 0; others are registered names. */
		if (v->custom_events && (wait_event_info & 0x00FFFFFFu) != 0)
			return NULL;
		return "Extension";
	case PG_CLASS_IPC:
		return lookup_enum(&v->ipc, wait_event_info);
	case PG_CLASS_TIMEOUT:
		return lookup_enum(&v->timeout, wait_event_info);
	case PG_CLASS_IO:
		return lookup_enum(&v->io, wait_event_info);
	case PG_CLASS_INJECTION_POINT:
		/* 17: every injection point wait is a registered name. */
		return NULL;
	default:
		return NULL;
	}
}

/* ---- names -> classes and events, for filters ---- */

static const struct {
	const char *name;
	int class;
} class_names[] = {
	{ "LWLock", PG_CLASS_LWLOCK },
	{ "Lock", PG_CLASS_LOCK },
	{ "BufferPin", PG_CLASS_BUFFERPIN },
	{ "Activity", PG_CLASS_ACTIVITY },
	{ "Client", PG_CLASS_CLIENT },
	{ "Extension", PG_CLASS_EXTENSION },
	{ "IPC", PG_CLASS_IPC },
	{ "Timeout", PG_CLASS_TIMEOUT },
	{ "IO", PG_CLASS_IO },
	{ "InjectionPoint", PG_CLASS_INJECTION_POINT },
};

int pg_wait_class_parse(const char *type_name)
{
	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (strcasecmp(type_name, class_names[i].name) == 0)
			return class_names[i].class;
	return -1;
}

static const char *table_find(const struct name_table *t, const char *name)
{
	for (unsigned int i = 0; i < t->len; i++)
		if (t->names[i] && strcasecmp(t->names[i], name) == 0)
			return t->names[i];
	return NULL;
}

/* One version's spelling of an event name of a class, or NULL. */
static const char *event_find(const struct pg_wait_tables *v, int class,
			      const char *name)
{
	const char *found;

	switch (class) {
	case PG_CLASS_LWLOCK:
		found = table_find(&v->lwlock, name);
		if (!found)
			found = table_find(&v->tranche, name);
		if (!found && strcasecmp(name, "extension") == 0)
			found = "extension";
		return found;
	case PG_CLASS_LOCK:
		return table_find(&v->lock, name);
	case PG_CLASS_BUFFERPIN:
		if (!v->buffer_pin.names)
			return strcasecmp(name, "BufferPin") == 0 ? "BufferPin" :
								    NULL;
		return table_find(&v->buffer_pin, name);
	case PG_CLASS_ACTIVITY:
		return table_find(&v->activity, name);
	case PG_CLASS_CLIENT:
		return table_find(&v->client, name);
	case PG_CLASS_EXTENSION:
		return strcasecmp(name, "Extension") == 0 ? "Extension" : NULL;
	case PG_CLASS_IPC:
		return table_find(&v->ipc, name);
	case PG_CLASS_TIMEOUT:
		return table_find(&v->timeout, name);
	case PG_CLASS_IO:
		return table_find(&v->io, name);
	default:
		return NULL;
	}
}

const char *pg_wait_event_spelling(int class, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(pg_wait_tables); i++) {
		const char *found = event_find(&pg_wait_tables[i], class, name);

		if (found)
			return found;
	}
	return NULL;
}

const char *pg_wait_class_name(int class)
{
	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (class_names[i].class == class)
			return class_names[i].name;
	return NULL;
}

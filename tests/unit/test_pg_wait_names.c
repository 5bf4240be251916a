/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_pg_wait_names.c - wait_event_info -> pg_stat_activity names.
 *
 * The expected values were read by hand from PostgreSQL's sources of each
 * branch (wait_event.h/pgstat.h enums, wait_event_names.txt sorted as
 * generate-wait_event_types.pl does, lwlocknames.txt/lwlocklist.h, the
 * 'Stamp M.N.' commits around a change), independently of the generator
 * that wrote broker/pg/pg_wait_names_data.c; the 15 ones also match what a
 * PostgreSQL 15 server shows in pg_stat_activity. Those of 19rc1, 18.6
 * and 17.12 were read in Debian's packages of them (postgresql-18
 * 18.6-3's source; the utils/wait_event_types.h and
 * storage/lwlocklist.h postgresql-server-dev-19 19~rc1-1 and -17
 * 17.12-0+deb13u1 install, and the names in their postgres binaries).
 */
#include <ctype.h>
#include <strings.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/unit/check.h"
#include "broker/pg/pg_wait_names.h"

/* Both columns of pg_stat_activity for one wait_event_info. */
#define EXPECT(major, info, type, name)                                    \
	do {                                                               \
		CHECK_STR(pg_wait_event_type((major), (info)), (type));    \
		CHECK_STR(pg_wait_event_name((major), (info)), (name));    \
	} while (0)

/* A known class whose event has no name we can know. */
#define EXPECT_NO_NAME(major, info, type)                                  \
	do {                                                               \
		CHECK_STR(pg_wait_event_type((major), (info)), (type));    \
		CHECK(pg_wait_event_name((major), (info)) == NULL);        \
	} while (0)

/* Neither column. */
#define EXPECT_NOTHING(major, info)                                        \
	do {                                                               \
		CHECK(pg_wait_event_type((major), (info)) == NULL);        \
		CHECK(pg_wait_event_name((major), (info)) == NULL);        \
	} while (0)

static void test_known_majors(void)
{
	CHECK(pg_wait_names_known_major(14) == 1);
	CHECK(pg_wait_names_known_major(15) == 1);
	CHECK(pg_wait_names_known_major(16) == 1);
	CHECK(pg_wait_names_known_major(17) == 1);
	CHECK(pg_wait_names_known_major(13) == 1);
	CHECK(pg_wait_names_known_major(18) == 1);
	CHECK(pg_wait_names_known_major(19) == 1);
	CHECK(pg_wait_names_known_major(12) == 0);
	CHECK(pg_wait_names_known_major(20) == 0);
	CHECK(pg_wait_names_known_major(0) == 0);
	CHECK(pg_wait_names_known_major(-1) == 0);
}

static void test_not_waiting(void)
{
	int m;

	for (m = 14; m <= 17; m++)
		EXPECT_NOTHING(m, 0);
}

static void test_unknown_major(void)
{
	EXPECT_NOTHING(12, 0x06000000);
	EXPECT_NOTHING(20, 0x06000000);
	EXPECT_NOTHING(0, 0x03000005);
	EXPECT_NOTHING(1500, 0x09000002);
}

static void test_unknown_class(void)
{
	int m;

	for (m = 14; m <= 17; m++) {
		EXPECT_NOTHING(m, 0x00000001);	/* class 0 */
		EXPECT_NOTHING(m, 0x02000000);	/* class 2 is not used */
		EXPECT_NOTHING(m, 0x0C000000);
		EXPECT_NOTHING(m, 0xFF000001);
	}
	/* InjectionPoint exists from 17 on. */
	EXPECT_NOTHING(14, 0x0B000000);
	EXPECT_NOTHING(15, 0x0B000001);
	EXPECT_NOTHING(16, 0x0B000000);
}

static void test_pg15_lock(void)
{
	EXPECT(15, 0x03000000, "Lock", "relation");
	EXPECT(15, 0x03000001, "Lock", "extend");
	EXPECT(15, 0x03000002, "Lock", "frozenid");
	EXPECT(15, 0x03000003, "Lock", "page");
	EXPECT(15, 0x03000004, "Lock", "tuple");
	EXPECT(15, 0x03000005, "Lock", "transactionid");
	EXPECT(15, 0x03000006, "Lock", "virtualxid");
	EXPECT(15, 0x03000007, "Lock", "spectoken");
	EXPECT(15, 0x03000008, "Lock", "object");
	EXPECT(15, 0x03000009, "Lock", "userlock");
	EXPECT(15, 0x0300000a, "Lock", "advisory");
	/* applytransaction only exists from 16 on */
	EXPECT_NO_NAME(15, 0x0300000b, "Lock");
}

static void test_lock_other_versions(void)
{
	EXPECT(14, 0x03000005, "Lock", "transactionid");
	EXPECT(14, 0x0300000a, "Lock", "advisory");
	EXPECT_NO_NAME(14, 0x0300000b, "Lock");
	EXPECT(16, 0x03000005, "Lock", "transactionid");
	EXPECT(16, 0x0300000b, "Lock", "applytransaction");
	EXPECT_NO_NAME(16, 0x0300000c, "Lock");
	EXPECT(17, 0x03000000, "Lock", "relation");
	EXPECT(17, 0x0300000a, "Lock", "advisory");
	EXPECT(17, 0x0300000b, "Lock", "applytransaction");
	EXPECT_NO_NAME(17, 0x0300ffff, "Lock");
	/* Like PostgreSQL, only the low 16 bits are the lock tag type. */
	EXPECT(15, 0x03010005, "Lock", "transactionid");
}

static void test_pg15_client(void)
{
	EXPECT(15, 0x06000000, "Client", "ClientRead");
	EXPECT(15, 0x06000001, "Client", "ClientWrite");
	EXPECT(15, 0x06000002, "Client", "GSSOpenServer");
	EXPECT(15, 0x06000005, "Client", "SSLOpenServer");
	EXPECT(15, 0x06000006, "Client", "WalSenderWaitForWAL");
	EXPECT(15, 0x06000007, "Client", "WalSenderWriteData");
	EXPECT_NO_NAME(15, 0x06000008, "Client");
}

static void test_pg15_activity_timeout_ipc_io(void)
{
	/* as seen in pg_stat_activity of a 15 server */
	EXPECT(15, 0x05000001, "Activity", "AutoVacuumMain");
	EXPECT(15, 0x05000003, "Activity", "BgWriterMain");
	EXPECT(15, 0x05000004, "Activity", "CheckpointerMain");
	EXPECT(15, 0x05000006, "Activity", "LogicalLauncherMain");
	EXPECT(15, 0x0500000b, "Activity", "WalWriterMain");
	EXPECT_NO_NAME(15, 0x0500000c, "Activity");
	EXPECT(15, 0x09000000, "Timeout", "BaseBackupThrottle");
	EXPECT(15, 0x09000001, "Timeout", "CheckpointWriteDelay");
	EXPECT(15, 0x09000002, "Timeout", "PgSleep");
	EXPECT(15, 0x09000007, "Timeout", "VacuumTruncate");
	EXPECT_NO_NAME(15, 0x09000008, "Timeout");
	EXPECT(15, 0x08000000, "IPC", "AppendReady");
	EXPECT(15, 0x08000002, "IPC", "ArchiveCommand");
	EXPECT(15, 0x08000008, "IPC", "BufferIO");
	EXPECT(15, 0x0800001f, "IPC", "MessageQueueReceive");
	EXPECT(15, 0x0800002f, "IPC", "SyncRep");
	EXPECT(15, 0x08000032, "IPC", "XactGroupUpdate");
	/* appended by a minor release (15.19) */
	EXPECT(15, 0x08000033, "IPC", "WalReceiverUpstreamCatchup");
	EXPECT_NO_NAME(15, 0x08000034, "IPC");
	EXPECT(15, 0x0A000000, "IO", "BaseBackupRead");
	EXPECT(15, 0x0A00000d, "IO", "DataFileExtend");
	EXPECT(15, 0x0A000011, "IO", "DataFileRead");
	EXPECT(15, 0x0A000014, "IO", "DataFileWrite");
	EXPECT(15, 0x0A00002e, "IO", "SLRURead");
	EXPECT(15, 0x0A000046, "IO", "WALSync");
	EXPECT(15, 0x0A000048, "IO", "WALWrite");
	/* appended at the end of the enum, out of alphabetical order */
	EXPECT(15, 0x0A000049, "IO", "VersionFileSync");
	EXPECT_NO_NAME(15, 0x0A00004a, "IO");
}

static void test_pg14(void)
{
	EXPECT(14, 0x05000007, "Activity", "PgStatMain");
	EXPECT(14, 0x0500000c, "Activity", "WalWriterMain");
	EXPECT(14, 0x06000000, "Client", "ClientRead");
	EXPECT(14, 0x06000001, "Client", "ClientWrite");
	EXPECT(14, 0x08000006, "IPC", "BufferIO");
	EXPECT(14, 0x0800002e, "IPC", "XactGroupUpdate");
	EXPECT(14, 0x0800002f, "IPC", "WalReceiverUpstreamCatchup");
	EXPECT_NO_NAME(14, 0x08000030, "IPC");
	EXPECT(14, 0x09000001, "Timeout", "PgSleep");
	EXPECT(14, 0x09000006, "Timeout", "RegisterSyncRequest");
	EXPECT_NO_NAME(14, 0x09000007, "Timeout");
	EXPECT(14, 0x0A00000f, "IO", "DataFileRead");
	EXPECT(14, 0x0A000045, "IO", "WALWrite");
	EXPECT(14, 0x0A000046, "IO", "LogicalChangesRead");
	EXPECT(14, 0x0A000049, "IO", "LogicalSubxactWrite");
	EXPECT_NO_NAME(14, 0x0A00004a, "IO");
}

static void test_pg16(void)
{
	EXPECT(16, 0x05000007, "Activity", "LogicalParallelApplyMain");
	EXPECT(16, 0x0500000c, "Activity", "WalWriterMain");
	EXPECT(16, 0x06000000, "Client", "ClientRead");
	EXPECT(16, 0x06000006, "Client", "WalSenderWaitForWAL");
	EXPECT(16, 0x08000008, "IPC", "BufferIO");
	EXPECT(16, 0x08000016, "IPC", "HashGrowBatchesReallocate");
	EXPECT(16, 0x08000034, "IPC", "XactGroupUpdate");
	EXPECT(16, 0x08000035, "IPC", "WalReceiverUpstreamCatchup");
	EXPECT_NO_NAME(16, 0x08000036, "IPC");
	EXPECT(16, 0x09000002, "Timeout", "PgSleep");
	EXPECT(16, 0x09000006, "Timeout", "SpinDelay");
	EXPECT(16, 0x0A000011, "IO", "DataFileRead");
	EXPECT(16, 0x0A000015, "IO", "DSMAllocate");
	EXPECT(16, 0x0A000025, "IO", "RelationMapReplace");
	EXPECT(16, 0x0A000049, "IO", "WALWrite");
	EXPECT(16, 0x0A00004a, "IO", "VersionFileSync");
	EXPECT_NO_NAME(16, 0x0A00004b, "IO");
}

static void test_pg17(void)
{
	/* 17 generates names from wait_event_names.txt: new spellings */
	EXPECT(17, 0x05000001, "Activity", "AutovacuumMain");
	EXPECT(17, 0x05000003, "Activity", "BgwriterMain");
	EXPECT(17, 0x05000009, "Activity", "ReplicationSlotsyncMain");
	EXPECT(17, 0x0500000e, "Activity", "WalSummarizerWal");
	EXPECT(17, 0x0500000f, "Activity", "WalWriterMain");
	EXPECT_NO_NAME(17, 0x05000010, "Activity");
	EXPECT(17, 0x06000000, "Client", "ClientRead");
	EXPECT(17, 0x06000001, "Client", "ClientWrite");
	EXPECT(17, 0x06000005, "Client", "SslOpenServer");
	EXPECT(17, 0x06000006, "Client", "WaitForStandbyConfirmation");
	EXPECT(17, 0x06000007, "Client", "WalSenderWaitForWal");
	EXPECT(17, 0x08000008, "IPC", "BufferIo");
	EXPECT(17, 0x0800000a, "IPC", "CheckpointDelayStart");
	EXPECT(17, 0x08000029, "IPC", "ProcarrayGroupUpdate");
	EXPECT(17, 0x08000038, "IPC", "XactGroupUpdate");
	/* 17.11 appends it after the sorted list (ABI_compatibility) */
	EXPECT(17, 0x08000039, "IPC", "WalReceiverUpstreamCatchup");
	EXPECT_NO_NAME(17, 0x0800003a, "IPC");
	EXPECT(17, 0x09000002, "Timeout", "PgSleep");
	EXPECT(17, 0x09000009, "Timeout", "WalSummarizerError");
	EXPECT(17, 0x0A000003, "IO", "BuffileRead");
	EXPECT(17, 0x0A000011, "IO", "DataFileRead");
	EXPECT(17, 0x0A00002f, "IO", "SlruRead");
	EXPECT(17, 0x0A00003d, "IO", "VersionFileSync");
	EXPECT(17, 0x0A00003f, "IO", "WalsenderTimelineHistoryRead");
	EXPECT(17, 0x0A000040, "IO", "WalBootstrapSync");
	EXPECT(17, 0x0A00004c, "IO", "WalWrite");
	EXPECT_NO_NAME(17, 0x0A00004d, "IO");
}

static void test_lwlock_individual(void)
{
	int m;

	for (m = 14; m <= 17; m++) {
		EXPECT(m, 0x01000001, "LWLock", "ShmemIndex");
		EXPECT(m, 0x01000003, "LWLock", "XidGen");
		EXPECT(m, 0x01000004, "LWLock", "ProcArray");
		EXPECT(m, 0x01000008, "LWLock", "WALWrite");
		EXPECT(m, 0x01000009, "LWLock", "ControlFile");
		EXPECT(m, 0x0100002f, "LWLock", "NotifyQueueTail");
		/* unused numbers */
		EXPECT_NO_NAME(m, 0x01000000, "LWLock");
		EXPECT_NO_NAME(m, 0x0100000a, "LWLock");
		EXPECT_NO_NAME(m, 0x0100002d, "LWLock");
	}
	EXPECT(14, 0x0100000b, "LWLock", "XactSLRU");
	EXPECT(15, 0x0100001a, "LWLock", "NotifySLRU");
	EXPECT(16, 0x0100002a, "LWLock", "OldSnapshotTimeMap");
	/* 17 dropped the SLRU locks and OldSnapshotTimeMap, added new ones */
	EXPECT_NO_NAME(17, 0x0100000b, "LWLock");
	EXPECT_NO_NAME(17, 0x0100002a, "LWLock");
	EXPECT(17, 0x01000030, "LWLock", "WaitEventCustom");
	EXPECT(17, 0x01000031, "LWLock", "WALSummarizer");
	EXPECT(17, 0x01000033, "LWLock", "InjectionPoint");
	EXPECT(17, 0x01000034, "LWLock", "SerialControl");
	/* Like PostgreSQL, only the low 16 bits are the tranche id. */
	EXPECT(15, 0x01010004, "LWLock", "ProcArray");
}

static void test_lwlock_tranches(void)
{
	int m;

	for (m = 14; m <= 16; m++) {
		EXPECT(m, 0x01000030, "LWLock", "XactBuffer");	/* 48 */
		EXPECT(m, 0x01000037, "LWLock", "WALInsert");	/* 55 */
		EXPECT(m, 0x01000038, "LWLock", "BufferContent");	/* 56 */
		EXPECT(m, 0x0100003c, "LWLock", "BufferMapping");	/* 60 */
		EXPECT(m, 0x0100003d, "LWLock", "LockManager");	/* 61 */
		EXPECT(m, 0x01000047, "LWLock", "PerXactPredicateList");	/* 71 */
	}
	EXPECT(15, 0x01000048, "LWLock", "PgStatsDSA");
	EXPECT(16, 0x0100004c, "LWLock", "LogicalRepLauncherHash");
	EXPECT(17, 0x01000035, "LWLock", "XactBuffer");	/* 53 */
	EXPECT(17, 0x0100003c, "LWLock", "WALInsert");	/* 60 */
	EXPECT(17, 0x01000041, "LWLock", "BufferMapping");	/* 65 */
	EXPECT(17, 0x01000042, "LWLock", "LockManager");	/* 66 */
	/* enum order differs from the order of the names in lwlock.c;
	 * spelled Multixact… up to 17.5 */
	EXPECT(17, 0x01000055, "LWLock", "MultiXactMemberSLRU");	/* 85 */
	EXPECT(17, 0x01000056, "LWLock", "MultiXactOffsetSLRU");	/* 86 */
	EXPECT(17, 0x0100005a, "LWLock", "XactSLRU");	/* 90 */
}

static void test_lwlock_extension_tranches(void)
{
	int m;

	/* last builtin tranche, then LWTRANCHE_FIRST_USER_DEFINED */
	EXPECT(14, 0x01000047, "LWLock", "PerXactPredicateList");
	EXPECT(14, 0x01000048, "LWLock", "extension");
	EXPECT(15, 0x0100004a, "LWLock", "PgStatsData");
	EXPECT(15, 0x0100004b, "LWLock", "extension");
	EXPECT(16, 0x0100004c, "LWLock", "LogicalRepLauncherHash");
	EXPECT(16, 0x0100004d, "LWLock", "extension");
	EXPECT(17, 0x0100005b, "LWLock", "ParallelVacuumDSA");
	EXPECT(17, 0x0100005c, "LWLock", "extension");
	for (m = 14; m <= 17; m++)
		EXPECT(m, 0x0100ffff, "LWLock", "extension");
}

static void test_ids_differ_between_versions(void)
{
	EXPECT(14, 0x0100003c, "LWLock", "BufferMapping");
	EXPECT(17, 0x0100003c, "LWLock", "WALInsert");
	EXPECT(14, 0x01000049, "LWLock", "extension");
	EXPECT(15, 0x01000049, "LWLock", "PgStatsHash");
	EXPECT(14, 0x05000007, "Activity", "PgStatMain");
	EXPECT(15, 0x05000007, "Activity", "RecoveryWalStream");
	EXPECT(16, 0x05000007, "Activity", "LogicalParallelApplyMain");
	EXPECT(17, 0x05000007, "Activity", "LogicalParallelApplyMain");
	EXPECT(14, 0x09000001, "Timeout", "PgSleep");
	EXPECT(15, 0x09000001, "Timeout", "CheckpointWriteDelay");
	EXPECT(14, 0x0A000011, "IO", "DataFileTruncate");
	EXPECT(15, 0x0A000011, "IO", "DataFileRead");
	EXPECT(16, 0x0A00002f, "IO", "SLRURead");
	EXPECT(17, 0x0A00002f, "IO", "SlruRead");
	EXPECT(16, 0x06000007, "Client", "WalSenderWriteData");
	EXPECT(17, 0x06000007, "Client", "WalSenderWaitForWal");
}

static void test_buffer_pin_and_extension(void)
{
	int m;

	for (m = 14; m <= 17; m++) {
		EXPECT(m, 0x04000000, "BufferPin", "BufferPin");
		EXPECT(m, 0x07000000, "Extension", "Extension");
	}
	/* 14-16 name the whole class; 17 has real ids */
	EXPECT(14, 0x04000001, "BufferPin", "BufferPin");
	EXPECT(16, 0x04000001, "BufferPin", "BufferPin");
	EXPECT_NO_NAME(17, 0x04000001, "BufferPin");
	EXPECT(15, 0x07000005, "Extension", "Extension");
	/* 17: custom names registered at run time */
	EXPECT_NO_NAME(17, 0x07000001, "Extension");
	EXPECT_NO_NAME(17, 0x0B000000, "InjectionPoint");
	EXPECT_NO_NAME(17, 0x0B000003, "InjectionPoint");
}

static void test_enum_classes_need_clean_high_bits(void)
{
	/* PostgreSQL compares the whole value with the enum members. */
	EXPECT_NO_NAME(15, 0x05010000, "Activity");
	EXPECT_NO_NAME(15, 0x06800000, "Client");
	EXPECT_NO_NAME(17, 0x0A010011, "IO");
	EXPECT_NO_NAME(16, 0x0900ffff, "Timeout");
}

static void test_pg13(void)
{
	EXPECT(13, 0x03000005, "Lock", "transactionid");
	EXPECT(13, 0x0300000a, "Lock", "advisory");
	EXPECT_NO_NAME(13, 0x0300000b, "Lock");
	EXPECT(13, 0x01000008, "LWLock", "WALWrite");
	/* CheckpointLock (10) and the SLRU locks went away in 14 */
	EXPECT(13, 0x0100000a, "LWLock", "Checkpoint");
	EXPECT_NO_NAME(14, 0x0100000a, "LWLock");
	EXPECT(13, 0x0100000b, "LWLock", "XactSLRU");
	/* unused numbers below the first tranche are not "extension" */
	EXPECT_NO_NAME(13, 0x01000000, "LWLock");
	EXPECT_NO_NAME(13, 0x0100002d, "LWLock");
	EXPECT(13, 0x0A00000d, "IO", "DataFileRead");
	EXPECT(13, 0x0A000043, "IO", "WALWrite");
	EXPECT_NO_NAME(13, 0x0A000044, "IO");
	EXPECT(13, 0x05000007, "Activity", "PgStatMain");
	EXPECT(13, 0x06000003, "Client", "LibPQWalReceiverConnect");
	EXPECT(13, 0x04000000, "BufferPin", "BufferPin");
	EXPECT(13, 0x07000003, "Extension", "Extension");
	/* 13 has no InjectionPoint class */
	EXPECT_NOTHING(13, 0x0B000000);
}

static void test_pg18(void)
{
	EXPECT(18, 0x03000005, "Lock", "transactionid");
	EXPECT(18, 0x01000008, "LWLock", "WALWrite");
	/* AIO: new IO events sort first, the io worker has its own */
	EXPECT(18, 0x0A000000, "IO", "AioIoCompletion");
	EXPECT(18, 0x0A000001, "IO", "AioIoUringExecution");
	EXPECT(18, 0x0A000002, "IO", "AioIoUringSubmit");
	EXPECT(18, 0x0A000015, "IO", "DataFileRead");
	EXPECT(18, 0x0A00004e, "IO", "WalSync");	/* "class 0x0a id 78" */
	EXPECT(18, 0x0A000050, "IO", "WalWrite");
	EXPECT_NO_NAME(18, 0x0A000051, "IO");
	EXPECT(18, 0x05000005, "Activity", "CheckpointerShutdown");
	EXPECT(18, 0x05000006, "Activity", "IoWorkerMain");
	EXPECT(18, 0x05000011, "Activity", "WalWriterMain");
	EXPECT(18, 0x01000035, "LWLock", "AioWorkerSubmissionQueue");	/* 53 */
	EXPECT(18, 0x04000000, "BufferPin", "BufferPin");
	EXPECT_NO_NAME(18, 0x04000001, "BufferPin");
	EXPECT(18, 0x07000000, "Extension", "Extension");
	EXPECT_NO_NAME(18, 0x07000001, "Extension");
	EXPECT_NO_NAME(18, 0x0B000000, "InjectionPoint");
}

static void test_pg19(void)
{
	EXPECT(19, 0x03000005, "Lock", "transactionid");
	EXPECT(19, 0x0300000b, "Lock", "applytransaction");
	EXPECT(19, 0x01000008, "LWLock", "WALWrite");
	/* ShmemIndex is a tranche now, its number 1 unused like 0 */
	EXPECT_NO_NAME(19, 0x01000000, "LWLock");
	EXPECT_NO_NAME(19, 0x01000001, "LWLock");
	EXPECT(19, 0x01000039, "LWLock", "AioWorkerControl");	/* 57 */
	EXPECT(19, 0x0100003a, "LWLock", "XactBuffer");	/* 58 */
	EXPECT(19, 0x01000063, "LWLock", "ShmemIndex");	/* 99 */
	/* class 4 is "Buffer" and has buffer lock waits */
	EXPECT(19, 0x04000000, "Buffer", "BufferCleanup");
	EXPECT(19, 0x04000001, "Buffer", "BufferExclusive");
	EXPECT(19, 0x04000002, "Buffer", "BufferShared");
	EXPECT(19, 0x04000003, "Buffer", "BufferShareExclusive");
	EXPECT_NO_NAME(19, 0x04000004, "Buffer");
	EXPECT(19, 0x0A000000, "IO", "AioIoCompletion");
	EXPECT(19, 0x0A000017, "IO", "DataFileRead");
	EXPECT(19, 0x05000006, "Activity", "IoWorkerMain");
	EXPECT(19, 0x07000000, "Extension", "Extension");
	EXPECT_NO_NAME(19, 0x07000002, "Extension");
	EXPECT_NO_NAME(19, 0x0B000001, "InjectionPoint");
}

/*
 * 19rc1 dropped online data checksums, which 19beta2 had: the two IPC
 * events of their launcher go, so every later IPC event moves down by 2
 * (enum WaitEventIPC of the rc1 utils/wait_event_types.h); the
 * DataChecksumsWorker LWLock goes, leaving its number 56 unused
 * (lwlocklist.h).
 */
static void test_pg19_rc1(void)
{
	EXPECT(19, 0x0800000c, "IPC", "CheckpointStart");	/* 12 */
	/* 13 and 14 were ChecksumEnableStartcondition/TemptableWait */
	EXPECT(19, 0x0800000d, "IPC", "ExecuteGather");	/* 15 in beta2 */
	EXPECT(19, 0x0800000e, "IPC", "HashBatchAllocate");
	EXPECT(19, 0x08000023, "IPC", "MessageQueueReceive");	/* 35 */
	EXPECT(19, 0x08000035, "IPC", "SyncRep");	/* 53 */
	EXPECT(19, 0x0800003d, "IPC", "XactGroupUpdate");	/* 61 */
	EXPECT_NO_NAME(19, 0x0800003e, "IPC");
	EXPECT_NO_NAME(19, 0x0800003f, "IPC");	/* beta2's XactGroupUpdate */
	EXPECT(19, 0x01000037, "LWLock", "LogicalDecodingControl");	/* 55 */
	EXPECT_NO_NAME(19, 0x01000038, "LWLock");	/* 56 */
	EXPECT(19, 0x01000039, "LWLock", "AioWorkerControl");	/* 57 */
	/* no major that pgoff names has them any more */
	CHECK(pg_wait_event_spelling(PG_CLASS_IPC,
				     "ChecksumEnableStartcondition") == NULL);
	CHECK(pg_wait_event_spelling(PG_CLASS_IPC,
				     "ChecksumEnableTemptableWait") == NULL);
	CHECK(pg_wait_event_spelling(PG_CLASS_LWLOCK,
				     "DataChecksumsWorker") == NULL);
	/* the other classes are as in beta2 */
	EXPECT(19, 0x04000003, "Buffer", "BufferShareExclusive");
	EXPECT(19, 0x0A000017, "IO", "DataFileRead");
}

/* The last builtin tranche, then LWTRANCHE_FIRST_USER_DEFINED. */
static void test_tranche_boundaries(void)
{
	EXPECT(13, 0x01000048, "LWLock", "PerXactPredicateList");	/* 72 */
	EXPECT(13, 0x01000049, "LWLock", "extension");
	EXPECT(17, 0x0100005b, "LWLock", "ParallelVacuumDSA");	/* 91 */
	EXPECT(17, 0x0100005c, "LWLock", "extension");
	EXPECT(18, 0x0100005e, "LWLock", "AioUringCompletion");	/* 94 */
	EXPECT(18, 0x0100005f, "LWLock", "extension");
	EXPECT(18, 0x0100ffff, "LWLock", "extension");
	/* 19 keeps extension tranche names in shared memory: no placeholder */
	EXPECT_NO_NAME(19, 0x01000064, "LWLock");	/* 100 */
	EXPECT_NO_NAME(19, 0x0100ffff, "LWLock");
}

/* Events appended by a minor release, and from which one they exist. */
static void test_minor_releases(void)
{
	/* WalReceiverUpstreamCatchup: 14.24, 15.19, 16.15, 17.11, 18.5 */
	CHECK(pg_wait_event_since_minor(14, 0x0800002f) == 24);
	/* Debian's 15.18 has not got it (its wait_event.h ends with
	 * XactGroupUpdate); the branch appends it after 15.18 */
	EXPECT(15, 0x08000033, "IPC", "WalReceiverUpstreamCatchup");
	CHECK(pg_wait_event_since_minor(15, 0x08000033) == 19);
	CHECK(pg_wait_event_since_minor(15, 0x08000032) == 0);
	CHECK(pg_wait_event_since_minor(16, 0x08000035) == 15);
	/* 17.12 and 18.6 have it, last in their ABI_compatibility part,
	 * and nothing after it */
	EXPECT(17, 0x08000039, "IPC", "WalReceiverUpstreamCatchup");
	CHECK(pg_wait_event_since_minor(17, 0x08000039) == 11);
	EXPECT(18, 0x08000039, "IPC", "WalReceiverUpstreamCatchup");
	CHECK(pg_wait_event_since_minor(18, 0x08000039) == 5);
	EXPECT_NO_NAME(18, 0x0800003a, "IPC");
	EXPECT(18, 0x08000038, "IPC", "XactGroupUpdate");
	CHECK(pg_wait_event_since_minor(18, 0x08000038) == 0);
	/* 19 has it sorted in, from the first release (58 in rc1, 60 in
	 * beta2) */
	EXPECT(19, 0x0800003a, "IPC", "WalReceiverUpstreamCatchup");
	CHECK(pg_wait_event_since_minor(19, 0x0800003a) == 0);
	/* VersionFileSync: "Sync PG_VERSION file in CREATE DATABASE" */
	CHECK(pg_wait_event_since_minor(15, 0x0A000049) == 6);
	CHECK(pg_wait_event_since_minor(16, 0x0A00004a) == 2);
	/* RegisterSyncRequest (13.7, 14.3), CheckpointWriteDelay (14.3) */
	EXPECT(13, 0x09000005, "Timeout", "RegisterSyncRequest");
	CHECK(pg_wait_event_since_minor(13, 0x09000005) == 7);
	CHECK(pg_wait_event_since_minor(14, 0x09000006) == 3);
	EXPECT(14, 0x09000005, "Timeout", "CheckpointWriteDelay");
	CHECK(pg_wait_event_since_minor(14, 0x09000005) == 3);
	/* there from the first release */
	CHECK(pg_wait_event_since_minor(15, 0x09000001) == 0);
	CHECK(pg_wait_event_since_minor(18, 0x0A000000) == 0);
	CHECK(pg_wait_event_since_minor(13, 0x03000005) == 0);
	/* not an event of the table */
	CHECK(pg_wait_event_since_minor(18, 0x0100005f) == -1);
	CHECK(pg_wait_event_since_minor(17, 0x0800003a) == -1);
	CHECK(pg_wait_event_since_minor(20, 0x03000005) == -1);
	CHECK(pg_wait_event_since_minor(15, 0) == -1);
}

/* "… commit <40 hex digits>" or "… (commit <40 hex digits>)" at the end. */
static int names_commit(const char *s)
{
	const char *c = strstr(s, "commit ");

	if (!c)
		return 0;
	c += strlen("commit ");
	for (int i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)c[i]))
			return 0;
	return strcmp(c + 40, ")") == 0 || c[40] == '\0';
}

/*
 * Where each major's tables come from: the Debian package of the version
 * this project's servers run (the sha256 as Debian's signed Sources and
 * Packages indexes list the .orig tarball or .deb), else the git branch.
 */
static void test_sources(void)
{
	static const struct {
		int major;
		const char *start;
	} want[] = {
		{ 13, "Debian postgresql-13 13.16-0+deb11u1 (upstream 13.16, "
		      ".orig sha256 c9cbbb6129f02328204828066bb3785c00a85c8ca8"
		      "fd329c2a8a53c1f5cd8865)" },
		{ 14, "REL_14_STABLE 14." },
		{ 15, "Debian postgresql-15 15.18-0+deb12u1 (upstream 15.18, "
		      ".orig sha256 11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78"
		      "885b5b55d8517d27c323b4)" },
		{ 16, "REL_16_STABLE 16." },
		{ 17, "Debian postgresql-server-dev-17 17.12-0+deb13u1 headers "
		      "(upstream 17.12, .deb sha256 d524d6d8169ce6c5733ab6b91c"
		      "aacfcf1d750123628cc43122baf8a8459a0f61) and "
		      "REL_17_STABLE commit " },
		{ 18, "Debian postgresql-18 18.6-3 (upstream 18.6, .orig sha256 "
		      "555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5"
		      "fa881d9f)" },
		{ 19, "Debian postgresql-server-dev-19 19~rc1-1 headers "
		      "(upstream 19rc1, .deb sha256 8c609673163107800596cbb4ff"
		      "31581f3bc87d7ef7a87ed97a6c550d9d73918f) and "
		      "REL_19_STABLE commit " },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *s = pg_wait_names_source(want[i].major);

		CHECK(s != NULL);
		if (strncmp(s, want[i].start, strlen(want[i].start)) != 0)
			fprintf(stderr, "%d: \"%s\"\n", want[i].major, s);
		CHECK(strncmp(s, want[i].start, strlen(want[i].start)) == 0);
		/* what is read in git is named by its commit */
		if (strncmp(s, "Debian ", 7) != 0 || strstr(s, " headers "))
			CHECK(names_commit(s));
		else
			CHECK(!strstr(s, "commit"));
	}
	CHECK(pg_wait_names_source(12) == NULL);
	CHECK(pg_wait_names_source(20) == NULL);
}

/* Filters name events of any version; the oldest spelling wins. */
static void test_spelling_across_versions(void)
{
	CHECK(pg_wait_class_parse("Buffer") == PG_CLASS_BUFFERPIN);
	CHECK(pg_wait_class_parse("bufferpin") == PG_CLASS_BUFFERPIN);
	CHECK(pg_wait_class_parse("InjectionPoint") == PG_CLASS_INJECTION_POINT);
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_IO, "aioiocompletion"),
		  "AioIoCompletion");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_ACTIVITY, "ioworkermain"),
		  "IoWorkerMain");
	CHECK(pg_wait_event_spelling(PG_CLASS_BUFFERPIN,
				     "BufferSharedExclusive") == NULL);
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_BUFFERPIN,
					 "BUFFERSHAREEXCLUSIVE"),
		  "BufferShareExclusive");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_BUFFERPIN, "bufferpin"),
		  "BufferPin");
	/* 13 spells it AutoVacuumMain, 17 and later AutovacuumMain */
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_ACTIVITY, "AUTOVACUUMMAIN"),
		  "AutoVacuumMain");
	/* only 13 has these */
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_LWLOCK, "checkpoint"),
		  "Checkpoint");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_ACTIVITY, "pgstatmain"),
		  "PgStatMain");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_IPC,
					 "walreceiverupstreamcatchup"),
		  "WalReceiverUpstreamCatchup");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_LWLOCK, "shmemindex"),
		  "ShmemIndex");
	CHECK(pg_wait_event_spelling(PG_CLASS_IO, "BufferShared") == NULL);
	CHECK(pg_wait_event_spelling(PG_CLASS_INJECTION_POINT, "x") == NULL);
}

/* Filters name what they want; names go back to classes and events. */
static void test_reverse_lookup(void)
{
	CHECK(pg_wait_class_parse("Lock") == PG_CLASS_LOCK);
	CHECK(pg_wait_class_parse("lwlock") == PG_CLASS_LWLOCK);
	CHECK(pg_wait_class_parse("IO") == PG_CLASS_IO);
	CHECK(pg_wait_class_parse("Locks") == -1);
	CHECK(pg_wait_class_parse("") == -1);
	CHECK_STR(pg_wait_class_name(PG_CLASS_BUFFERPIN), "BufferPin");
	CHECK(pg_wait_class_name(0x42) == NULL);
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_LOCK, "TransactionId"),
		  "transactionid");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_IO, "datafileread"),
		  "DataFileRead");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_LWLOCK, "extension"),
		  "extension");
	CHECK_STR(pg_wait_event_spelling(PG_CLASS_EXTENSION, "extension"),
		  "Extension");
	CHECK(pg_wait_event_spelling(PG_CLASS_LOCK, "DataFileRead") == NULL);
	CHECK(pg_wait_event_spelling(PG_CLASS_IO, "nosuchevent") == NULL);
	CHECK(pg_wait_event_spelling(0x42, "x") == NULL);
}

/* Every name 13..19 gives, for every class, is found again by name. */
static void test_every_name_round_trips(void)
{
	static const int classes[] = { PG_CLASS_LWLOCK, PG_CLASS_LOCK,
		PG_CLASS_BUFFERPIN, PG_CLASS_ACTIVITY, PG_CLASS_CLIENT,
		PG_CLASS_EXTENSION, PG_CLASS_IPC, PG_CLASS_TIMEOUT, PG_CLASS_IO,
		PG_CLASS_INJECTION_POINT };
	int checked = 0;

	for (int major = 13; major <= 19; major++) {
		for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
			for (uint32_t id = 0; id < 400; id++) {
				uint32_t info = (uint32_t)classes[c] << 24 | id;
				const char *name = pg_wait_event_name(major, info);

				if (!name)
					continue;
				const char *back =
					pg_wait_event_spelling(classes[c], name);

				/* versions differ in case: AutoVacuum/Autovacuum */
				CHECK(back && strcasecmp(back, name) == 0);
				checked++;
			}
		}
	}
	CHECK(checked > 1600);
}

int main(void)
{
	RUN(test_known_majors);
	RUN(test_reverse_lookup);
	RUN(test_every_name_round_trips);
	RUN(test_not_waiting);
	RUN(test_unknown_major);
	RUN(test_unknown_class);
	RUN(test_pg15_lock);
	RUN(test_lock_other_versions);
	RUN(test_pg15_client);
	RUN(test_pg15_activity_timeout_ipc_io);
	RUN(test_pg14);
	RUN(test_pg16);
	RUN(test_pg17);
	RUN(test_lwlock_individual);
	RUN(test_lwlock_tranches);
	RUN(test_lwlock_extension_tranches);
	RUN(test_ids_differ_between_versions);
	RUN(test_buffer_pin_and_extension);
	RUN(test_enum_classes_need_clean_high_bits);
	RUN(test_pg13);
	RUN(test_pg18);
	RUN(test_pg19);
	RUN(test_pg19_rc1);
	RUN(test_tranche_boundaries);
	RUN(test_minor_releases);
	RUN(test_sources);
	RUN(test_spelling_across_versions);
	return CHECK_DONE();
}

// SPDX-License-Identifier: GPL-2.0-only
/* event_dict.c - the stored event lines' dictionary; see event_dict.h. */
#include "broker/record/event_dict.h"

/*
 * The events' compression dictionary: what most stored lines share
 * (keys, common values and kernel frames), the likeliest last (the
 * codecs reach the end of a dictionary with the shortest distances).
 * Stored records need it as it is: change it only with a new STORE_F_
 * flag.
 */
const char event_dict[] =
	"\"stack\":[\"schedule_hrtimeout_range_clock\",\"schedule_hrtimeout_range\","
	"\"ep_poll\",\"do_epoll_wait\",\"__x64_sys_epoll_wait\",\"futex_wait_queue\","
	"\"futex_wait\",\"do_futex\",\"__x64_sys_futex\",\"io_schedule\","
	"\"jbd2_log_wait_commit\",\"ext4_sync_file\",\"__x64_sys_fdatasync\","
	"\"do_fsync\",\"folio_wait_bit_common\",\"filemap_read\",\"vfs_read\","
	"\"ksys_pread64\",\"__x64_sys_pread64\",\"wait_woken\",\"sk_wait_data\","
	"\"tcp_recvmsg\",\"unix_stream_read_generic\",\"sock_read_iter\","
	"\"hrtimer_nanosleep\",\"do_nanosleep\",\"__x64_sys_clock_nanosleep\","
	"\"exit_to_user_mode_loop\",\"irqentry_exit_to_user_mode\","
	"\"asm_sysvec_apic_timer_interrupt\",\"asm_exc_page_fault\","
	"\"do_syscall_64\",\"entry_SYSCALL_64_after_hwframe\"],"
	"\"wait\":\"io\",\"wait\":\"net\",\"wait\":\"poll\",\"wait\":\"sleep\","
	"\"wait\":\"ipc\",\"wait\":\"cpu\",\"wait\":\"other\",\"kernel_wait\":\"lock\","
	"\"wait_event_type\":\"IO\",\"wait_event\":\"WALSync\",\"wait_event\":\"WALWrite\","
	"\"wait_event\":\"DataFileRead\",\"wait_event_type\":\"Client\","
	"\"wait_event\":\"ClientRead\",\"wait_event_type\":\"LWLock\","
	"\"wait_event\":\"WALWriteLock\",\"wait_event_type\":\"Activity\","
	"\"wait_event\":\"WalWriterMain\",\"backend_type\":\"walwriter\","
	"\"backend_type\":\"checkpointer\",\"wait_event\":\"tuple\","
	"{\"type\":\"offcpu\",\"seq\":1,\"time\":\"2026-12-02T14:57:26.919500Z\","
	"\"start\":\"2026-12-02T14:57:26.669234Z\",\"pid\":26514,\"tid\":26514,"
	"\"comm\":\"postgres\",\"duration_ns\":250265943,\"blocked_ns\":250257638,"
	"\"runq_ns\":8305,\"wait\":\"sleep\",\"kernel_wait\":\"poll\",\"pg\":{"
	"\"wait_event_info\":150994946,\"wait_event_type\":\"Timeout\","
	"\"wait_event\":\"PgSleep\",\"backend_type\":\"client backend\","
	"\"database\":\"postgres\",\"user\":\"postgres\",\"cluster\":{\"id\":1,"
	"\"data_dir\":\"/var/lib/postgresql/15/main\",\"port\":5432,"
	"\"version\":\"15.18\"}},\"waker\":{\"pid\":0,\"tid\":0,"
	"\"comm\":\"swapper/0\"},\"stack\":[\"do_epoll_wait\","
	"\"__x64_sys_epoll_wait\",\"do_syscall_64\",\"entry_SYSCALL_64_after_hwframe\"]}"
	"{\"type\":\"episode\",\"seq\":1,\"time\":\"2026-12-02T15:09:17.975290Z\","
	"\"start\":\"2026-12-02T15:09:17.169564Z\",\"pid\":3794,\"tid\":3794,"
	"\"comm\":\"postgres\",\"duration_ns\":805725903,\"blocked_ns\":805565964,"
	"\"runq_ns\":85089,\"on_cpu_ns\":74850,\"intervals\":2,\"wait\":\"lock\","
	"\"pg\":{\"wait_event_info\":50331653,\"wait_event_type\":\"Lock\","
	"\"wait_event\":\"transactionid\",\"backend_type\":\"client backend\","
	"\"database\":\"postgres\",\"user\":\"postgres\",\"cluster\":{\"id\":1,"
	"\"data_dir\":\"/var/lib/postgresql/15/main\",\"port\":5432,"
	"\"version\":\"15.18\"}},\"waker\":{\"pid\":3792,\"tid\":3792,"
	"\"comm\":\"postgres\",\"backend_type\":\"client backend\","
	"\"wait_event_info\":0,\"wait_event_type\":null,\"wait_event\":null}}";

const size_t event_dict_len = sizeof(event_dict) - 1;

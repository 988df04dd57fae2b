// SPDX-License-Identifier: MIT
// Ctrl-C while ncnn runs.
//
// The Unix port raises KeyboardInterrupt from inside its SIGINT handler
// (MICROPY_ASYNC_KBD_INTR): a longjmp out of whatever code the signal lands in. In a
// process that runs ncnn that is never safe: out of ncnn's C++ frames it skips
// destructors and unlocks; out of free() in a Mat's finaliser it leaves malloc's lock
// taken (the next allocation hangs); in one of ncnn's OpenMP threads it jumps onto the
// main thread's stack from another thread. Ctrl-C at random moments of a loop of extracts
// crashed or hung the process (tests/test_interrupt.py).
//
// So on that port ncnn_mp's SIGINT handler replaces the port's, everywhere, not only
// while ncnn runs (finalisers and ncnn's idle threads run at any time): it schedules the
// KeyboardInterrupt, as Ctrl-C does on the ports without asynchronous interrupts (every
// microcontroller port). Python code raises it at its next branch, a sleep or a blocking
// read returns early (EINTR) and raises it, and a public method that entered ncnn raises
// it as soon as ncnn returns (ncnn_mp_call_stop takes it). A second Ctrl-C before the
// first could be raised ends the process, as SIGINT ends a program: the way out of a
// long C call.
//
// micropython.mk links the port's mp_hal_set_interrupt_char (called before each script
// and REPL line, and by micropython.kbd_intr) through the wrapper below.
#include "py/mphal.h"  // MICROPY_BEGIN_ATOMIC_SECTION; the Unix port's CHAR_CTRL_C
#include "ncnn_mp.h"

#if NCNN_MP_DEFER_SIGINT
#include <signal.h>
#include <unistd.h>

static void ncnn_mp_sigint(int signum) {
    (void)signum;
    if (MP_STATE_MAIN_THREAD(mp_pending_exception) == MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception))) {
        static const char msg[] = "\nncnn_mp: a second Ctrl-C before the first could be raised: exiting\n";
        ssize_t written = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)written;
        signal(SIGINT, SIG_DFL);
        raise(SIGINT);  // delivered once this handler returns
        return;
    }
    mp_sched_keyboard_interrupt();
}

void __real_mp_hal_set_interrupt_char(char c);

void __wrap_mp_hal_set_interrupt_char(char c) {
    __real_mp_hal_set_interrupt_char(c);
    if (c == CHAR_CTRL_C) {
        struct sigaction sa;
        sa.sa_handler = ncnn_mp_sigint;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR and raises the interrupt
        sigaction(SIGINT, &sa, NULL);
    }
}

#elif MICROPY_ASYNC_KBD_INTR
#warning "ncnn_mp: this port raises KeyboardInterrupt from its SIGINT handler and ncnn_mp's replacement is not linked in (see interrupt.c): Ctrl-C during inference can crash or hang the process"
#endif

mp_obj_t ncnn_mp_take_pending(void) {
    if (MP_STATE_THREAD(mp_pending_exception) == MP_OBJ_NULL) {
        return MP_OBJ_NULL;
    }
    mp_uint_t atomic = MICROPY_BEGIN_ATOMIC_SECTION();  // as mp_handle_pending takes it
    mp_obj_t exc = MP_STATE_THREAD(mp_pending_exception);
    MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
    MICROPY_END_ATOMIC_SECTION(atomic);
    return exc;
}

// SPDX-License-Identifier: MIT
// ncnn_mp: shared declarations for the MicroPython binding of ncnn's C API.
// Each ncnn object lives in its own file (mat.c, net.c, ...); what more than one file needs
// is declared here and nowhere else, in sections from the bottom of the binding up (state,
// errors, methods, uses, lending, calls, natives, the classes, the trampoline), each naming
// the file that defines it (docs/internals.md: the files from the bottom up).
#ifndef NCNN_MP_H
#define NCNN_MP_H

#include "py/obj.h"
#include "py/runtime.h"
#include "py/mphal.h"  // MICROPY_BEGIN_ATOMIC_SECTION

#include <ncnn/c_api.h>

#include "config.h"
#include "shape_guard.h"

#if NCNN_STRING
// A layer's name and type as C strings. ncnn hands out its std::string's c_str(), and with
// NCNN_SIMPLESTL (ncnn's own minimal STL: the RISC-V board's build, and any toolchain
// without a C++ library) an empty string's c_str() is NULL, not "": a Layer made on its own
// has neither name nor type. (The Cortex-M board reads address 0 without a fault, and found
// a zero byte there; the RISC-V board faults.) Every reader goes through these two.
static inline const char *ncnn_mp_layer_name(ncnn_layer_t layer) {
    const char *s = ncnn_layer_get_name(layer);
    return s ? s : "";
}
static inline const char *ncnn_mp_layer_type(ncnn_layer_t layer) {
    const char *s = ncnn_layer_get_type(layer);
    return s ? s : "";
}
#pragma GCC poison ncnn_layer_get_name ncnn_layer_get_type
#endif

// ---------------------------------------------------------------------------
// Per-interpreter state and the lock (state.c).

// The lock over what threads share; never held across an allocation, a Python call,
// or a call into ncnn that can call back.
mp_uint_t ncnn_mp_lock(void);
void ncnn_mp_unlock(mp_uint_t state);
// Adds delta to a reference count under the lock; the count after.
int ncnn_mp_count(int *refs, int delta);
// The calling thread (MicroPython's state of it), or NULL.
const void *ncnn_mp_thread(void);
// The Python objects only ncnn's memory refers to, keyed by the C record ncnn holds.
// add may allocate (and raise); get and remove never do (finalisers call them).
void ncnn_mp_root_add(const void *key, mp_obj_t value);
mp_obj_t ncnn_mp_root_get(const void *key);
// (Under the lock.) root_get's lookup, for a file that reads the roots with other state.
mp_obj_t ncnn_mp_root_find_locked(const void *key);
mp_obj_t ncnn_mp_root_remove(const void *key);  // the value removed, or MP_OBJ_NULL
void ncnn_mp_live_layers_add(int delta);
// After storing `value` where a collection running in another thread (no GIL) may already
// have looked: that collection marks from the roots and reachable objects first and scans
// each thread's stack last, so a value stored after the first and gone from this stack
// before the last would be freed while stored. Keeps `value` on this stack until any such
// collection is over (gc_nbytes waits for the GC's lock; this stack is scanned meanwhile).
void ncnn_mp_gc_settle(mp_obj_t value);
size_t ncnn_mp_custom_live_count(void);

// ---------------------------------------------------------------------------
// Errors and argument checks (checks.c): every message reads
// "Class.method: what was wrong (what was expected)".

// What ncnn's layers return when an allocation failed (where they check): MemoryError.
#define NCNN_MP_OUT_OF_MEMORY (-100)
// A param load's own refusal: a layer would be given an int8 blob it cannot read.
#define NCNN_MP_INT8_MISFIT (-1001)

// Message texts, each one literal on one line (MicroPython's collector of texts to compress
// takes nothing else): NCNN_MP_TEXT(x) what follows "Class.method: " (ncnn_mp_raise_value,
// a refusal's reason), NCNN_MP_FORMAT(x) a whole message's format. Where the port compresses
// its messages (MICROPY_ROM_TEXT_COMPRESSION), ncnn_mp's compress with them; where it reports
// errors tersely (MICROPY_ERROR_REPORTING_TERSE) ncnn_mp's say only where ("Class.method",
// or the class of a custom layer); with none (..._NONE), only the exception's type is left.
#if MICROPY_ERROR_REPORTING <= MICROPY_ERROR_REPORTING_TERSE
#define NCNN_MP_TEXT(x) MP_ERROR_TEXT("")
#define NCNN_MP_FORMAT(x) MP_ERROR_TEXT("%s")
#else
#define NCNN_MP_TEXT(x) MP_ERROR_TEXT(x)
#define NCNN_MP_FORMAT(x) MP_ERROR_TEXT(x)
#endif
// A text as a C string, for a %s: decompressed into buf where it is compressed.
#define NCNN_MP_TEXT_MAX 320  // (checks.c: at least the longest message, and its NUL)
// (Possibly unused: with no error reporting the raise that would read it is left out.)
#if MICROPY_ROM_TEXT_COMPRESSION
typedef char ncnn_mp_text_buf_t[NCNN_MP_TEXT_MAX] __attribute__((unused));
const char *ncnn_mp_text(mp_rom_error_text_t text, ncnn_mp_text_buf_t *buf);
#else
typedef char ncnn_mp_text_buf_t[1] __attribute__((unused));
#define ncnn_mp_text(text, buf) ((void)(buf), (const char *)(text))
#endif

// An exception of `type` reading "WHERE: WHAT" (what: an NCNN_MP_TEXT).
#if MICROPY_ERROR_REPORTING == MICROPY_ERROR_REPORTING_NONE
#define ncnn_mp_raise_text(type, where, what) mp_raise_type(type)
#else
NORETURN void ncnn_mp_raise_text(const mp_obj_type_t *type, const char *where, mp_rom_error_text_t what);
#endif
#define ncnn_mp_raise_type(where, what) ncnn_mp_raise_text(&mp_type_TypeError, where, what)
#define ncnn_mp_raise_value(where, what) ncnn_mp_raise_text(&mp_type_ValueError, where, what)
// NotImplementedError: this ncnn was built without `option` (an NCNN_MP_TEXT, e.g. "NCNN_STRING").
NORETURN void ncnn_mp_raise_not_built(const char *where, mp_rom_error_text_t option);
// NotImplementedError: the board left out ncnn_mp's part `name` (a switch of config.h).
NORETURN void ncnn_mp_raise_left_out(const char *where, const char *name);
// The shape guard's refusal (shape_guard.h) as a ValueError: "WHERE: the input does not fit
// the WHAT: LAYER takes ..., its input has ... (w=.. h=.. c=..)".
NORETURN void ncnn_mp_raise_shape_refused(const char *where, const char *what, const char *layer,
    const ncnn_mp_shape_refusal_t *r);
// What the C++ seam caught (cxx_seam.h, NCNN_MP_CAUGHT_*) as the exception of its kind, naming
// the call and who threw: `layer` ("layer 'up' (Interp)"), or NULL for ncnn outside a layer.
NORETURN void ncnn_mp_raise_caught(const char *where, const char *layer, int caught);
// ncnn_mp_cxx_catch(fn, arg), raising what it caught (ncnn_mp_raise_caught, no layer named).
void ncnn_mp_seam(void (*fn)(void *arg), void *arg, const char *where);
// A count of blobs as the refusals print it: "2", "2 to 3", "2 or more" (hi -1).
void ncnn_mp_print_count(const mp_print_t *print, int lo, int hi);
// Sizes MicroPython's message buffer past every real message (why: checks.c).
mp_rom_error_text_t ncnn_mp_longest_message(void);

// The built-in layers ncnn's Mat helpers run internally (Mat::substract_mean_normalize a
// Bias or Scale, copy_make_border a Padding, ...). ncnn calls through NULL when its build
// left the layer out (WITH_LAYER_<name>=OFF, as small MCU builds do): check first.
typedef enum {
    NCNN_MP_HELPER_BIAS, NCNN_MP_HELPER_SCALE, NCNN_MP_HELPER_PADDING, NCNN_MP_HELPER_CROP,
    NCNN_MP_HELPER_PACKING, NCNN_MP_HELPER_FLATTEN, NCNN_MP_HELPER_COUNT
} ncnn_mp_helper_layer_t;
// NotImplementedError naming the layer if this ncnn was built without it.
void ncnn_mp_require_layer(ncnn_mp_helper_layer_t layer, const char *where);

// The most ncnn_mp lets ncnn allocate for one buffer: ncnn indexes with int in places.
#define NCNN_MP_ALLOC_MAX 0x7fffffffULL
// MemoryError naming `where` and `what` unless the heap can give `bytes` now (checks.c).
void ncnn_mp_check_alloc(unsigned long long bytes, const char *where, const char *what);
// Only the bound above: for a Mat an arena will hold (a trial malloc of its size would raise
// the C heap's high-water by what the arena was reserved to spare it).
void ncnn_mp_check_alloc_bound(unsigned long long bytes, const char *where, const char *what);

// The native object of `obj` if it is an instance of `type` or of a Python subclass
// of it; TypeError naming `where` otherwise.
void *ncnn_mp_cast(mp_obj_t obj, const mp_obj_type_t *type, const char *where);

// A float argument (int or float), TypeError naming `where` and `name` otherwise.
float ncnn_mp_get_float(mp_obj_t obj, const char *where, const char *name);
// The buffer of `obj`, TypeError naming `where` and `name` if it has none.
void ncnn_mp_get_buffer(mp_obj_t obj, mp_buffer_info_t *info, mp_uint_t flags, const char *where, const char *name);
// The longest side of a pixel frame (Mat.from_pixels*, to_pixels*, draw_*): a row's bytes fit an int.
#define NCNN_MP_PIXELS_MAX_SIDE (1 << 15)
// A pixel buffer argument (mat_pixels.c, mat_camera.c): a frame of w x h pixels, each row w * bpp
// bytes, rows `*stride` bytes apart (0: packed, set here), `rows` rows in all (h; NV12/NV21: the
// chroma's h / 2 more). Its first byte; ValueError naming `where` unless the buffer holds them all.
uint8_t *ncnn_mp_get_pixels(mp_obj_t buf, int w, int h, int bpp, unsigned long long rows, int *stride, bool writable,
    const char *where);

// A blob key (Extractor.input/extract, Net.input_int8_scale): its index for an int, -1 for
// a name (str), TypeError otherwise; and the error for a blob the net does not have
// (IndexError for an index, ValueError for a name).
int ncnn_mp_blob_key(mp_obj_t key, const char *where);
NORETURN void ncnn_mp_raise_blob_missing(mp_obj_t key, const char *where);

// "Class.attr" written into buf (NCNN_MP_WHERE_LEN bytes): `where` for an attribute.
#define NCNN_MP_WHERE_LEN 48
const char *ncnn_mp_attr_where(char *buf, const char *cls, qstr attr);
// AttributeError "Class.attr: read-only" (or "cannot be deleted") for a store (delete) in
// an attr handler's dest: MicroPython's own would say the attribute does not exist.
NORETURN void ncnn_mp_raise_attr_fixed(const char *cls, qstr attr, mp_obj_t *dest);

// A C int argument that must lie in [lo, hi]: TypeError if not an int, ValueError outside.
int ncnn_mp_get_int_in(mp_obj_t obj, int lo, int hi, const char *where, const char *name);
// An index among `count` things (negative ones count from the end when `wrap`): TypeError
// if it is not an int, IndexError if there is no such thing, saying "(<of> <count>)".
int ncnn_mp_get_index(mp_obj_t obj, int count, bool wrap, const char *where, const char *name, const char *of);

// ---------------------------------------------------------------------------
// The C stack ncnn runs on (stack.c): bytes a call `depth` layers deep needs, and a
// RuntimeError naming `where` if this thread has less left.
size_t ncnn_mp_stack_need(int depth);
void ncnn_mp_stack_check(int depth, const char *where);

// ---------------------------------------------------------------------------
// Ctrl-C (interrupt.c). NCNN_MP_DEFER_SIGINT: micropython.mk replaced the Unix port's
// asynchronous SIGINT handler by one that schedules KeyboardInterrupt.

// The pending exception (a KeyboardInterrupt that came while ncnn ran), taken: MicroPython
// will not raise it again. MP_OBJ_NULL if there is none.
mp_obj_t ncnn_mp_take_pending(void);

// ---------------------------------------------------------------------------
// Methods and functions (method.c). Every callable ncnn_mp exports is one of these: it
// knows its public name, checks how it was called (the number of positional arguments,
// keywords, self) and raises TypeError("Class.method: ...") before the C function runs,
// where MicroPython's own builtins would say "function takes 2 positional arguments".
// Found in a class's locals dict it binds self (MP_TYPE_FLAG_BINDS_SELF), as a builtin
// does; staticmethod and classmethod wrap it as they wrap any function.

typedef enum {
    NCNN_MP_CALL_0, NCNN_MP_CALL_1, NCNN_MP_CALL_2, NCNN_MP_CALL_3, NCNN_MP_CALL_VAR, NCNN_MP_CALL_KW
} ncnn_mp_call_kind_t;

// What args[0] is: nothing special (a function, a static method), an instance of
// self_type (a method: checked, and the native object of a Python subclass passed on),
// or the class (a class method). The counts in messages leave self and the class out.
typedef enum { NCNN_MP_SELF_NONE, NCNN_MP_SELF_INSTANCE, NCNN_MP_SELF_CLASS } ncnn_mp_self_kind_t;

typedef struct _ncnn_mp_method_t {
    mp_obj_base_t base;
    const char *name;                 // "Class.method", "Class.__exit__", "ncnn_mp.version"
    const mp_obj_type_t *self_type;   // NCNN_MP_SELF_INSTANCE: the class
    uint8_t kind;                     // ncnn_mp_call_kind_t
    uint8_t self;                     // ncnn_mp_self_kind_t
    uint16_t n_min, n_max;            // positional arguments, self included
    union {
        mp_fun_0_t _0;
        mp_fun_1_t _1;
        mp_fun_2_t _2;
        mp_fun_3_t _3;
        mp_fun_var_t var;
        mp_fun_kw_t kw;
    } fun;
} ncnn_mp_method_t;

extern const mp_obj_type_t ncnn_mp_type_method;

#define NCNN_MP_METHOD_OBJ(obj_name, name_str, type, self_kind, call_kind, lo, hi, field, fun_name) \
    const ncnn_mp_method_t obj_name = { {&ncnn_mp_type_method}, name_str, type, call_kind, self_kind, lo, hi, \
                                        .fun.field = fun_name }

// Methods of class Class (self is an ncnn_mp_type_Class, or a Python subclass's instance):
// NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Mat_fill_obj, Mat, fill, ncnn_mp_Mat_fill) is "Mat.fill".
// As MicroPython's MP_DEFINE_CONST_FUN_OBJ_*, the counts include self.
#define NCNN_MP_DEFINE_METHOD_1(obj_name, Class, method, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, &ncnn_mp_type_##Class, NCNN_MP_SELF_INSTANCE, NCNN_MP_CALL_1, 1, 1, _1, fun_name)
#define NCNN_MP_DEFINE_METHOD_2(obj_name, Class, method, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, &ncnn_mp_type_##Class, NCNN_MP_SELF_INSTANCE, NCNN_MP_CALL_2, 2, 2, _2, fun_name)
#define NCNN_MP_DEFINE_METHOD_3(obj_name, Class, method, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, &ncnn_mp_type_##Class, NCNN_MP_SELF_INSTANCE, NCNN_MP_CALL_3, 3, 3, _3, fun_name)
#define NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(obj_name, Class, method, n_args_min, n_args_max, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, &ncnn_mp_type_##Class, NCNN_MP_SELF_INSTANCE, NCNN_MP_CALL_VAR, \
        n_args_min, n_args_max, var, fun_name)
// Keywords too: the C function parses them with ncnn_mp_parse_args.
#define NCNN_MP_DEFINE_METHOD_KW(obj_name, Class, method, n_args_min, n_args_max, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, &ncnn_mp_type_##Class, NCNN_MP_SELF_INSTANCE, NCNN_MP_CALL_KW, \
        n_args_min, n_args_max, kw, fun_name)
// The function a staticmethod (no self) or a classmethod (args[0] the class) wraps.
#define NCNN_MP_DEFINE_STATIC_1(obj_name, Class, method, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, NULL, NCNN_MP_SELF_NONE, NCNN_MP_CALL_1, 1, 1, _1, fun_name)
#define NCNN_MP_DEFINE_STATIC_VAR_BETWEEN(obj_name, Class, method, n_args_min, n_args_max, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, NULL, NCNN_MP_SELF_NONE, NCNN_MP_CALL_VAR, \
        n_args_min, n_args_max, var, fun_name)
#define NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(obj_name, Class, method, n_args_min, n_args_max, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, #Class "." #method, NULL, NCNN_MP_SELF_CLASS, NCNN_MP_CALL_VAR, \
        n_args_min, n_args_max, var, fun_name)
// A module-level function: NCNN_MP_DEFINE_FUNCTION_0(ncnn_mp_version_obj, "ncnn_mp.version", ...).
#define NCNN_MP_DEFINE_FUNCTION_0(obj_name, name_str, fun_name) \
    NCNN_MP_METHOD_OBJ(obj_name, name_str, NULL, NCNN_MP_SELF_NONE, NCNN_MP_CALL_0, 0, 0, _0, fun_name)

// __enter__ (returns self) and __exit__ (calls close()) of a class that has close().
mp_obj_t ncnn_mp_return_self(mp_obj_t self);
mp_obj_t ncnn_mp_exit_closes(size_t n_args, const mp_obj_t *args);
#define NCNN_MP_DEFINE_CONTEXT_MANAGER(Class) \
    static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_##Class##_enter_obj, Class, __enter__, ncnn_mp_return_self); \
    static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_##Class##_exit_obj, Class, __exit__, 4, 4, ncnn_mp_exit_closes)
// The same for a class whose instances ncnn_mp alone makes, of the exact type (a Python
// subclass cannot have instances, so none overrides close()): __exit__ calls the class's
// close function itself, without looking close() up and calling it as a method.
#define NCNN_MP_DEFINE_CONTEXT_MANAGER_CLOSING(Class, close_fun) \
    static mp_obj_t ncnn_mp_##Class##_exit(size_t n_args, const mp_obj_t *args) { \
        (void)n_args; \
        return close_fun(args[0]); \
    } \
    static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_##Class##_enter_obj, Class, __enter__, ncnn_mp_return_self); \
    static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_##Class##_exit_obj, Class, __exit__, 4, 4, ncnn_mp_##Class##_exit)

// Arguments by keyword (constructors, and methods defined with _KW): checks what MicroPython's
// mp_arg_parse_all would report in its own words (too many positional arguments, an unknown
// keyword, one given twice, a required one missing) and raises TypeError naming `where`;
// then mp_arg_parse_all fills out_vals. (allowed: MP_ARG_OBJ or MP_ARG_BOOL only, keyword-only
// ones last.)
void ncnn_mp_parse_args(const char *where, size_t n_pos, const mp_obj_t *pos, mp_map_t *kws,
    size_t n_allowed, const mp_arg_t *allowed, mp_arg_val_t *out_vals);
void ncnn_mp_parse_args_kw_array(const char *where, size_t n_pos, size_t n_kw, const mp_obj_t *args,
    size_t n_allowed, const mp_arg_t *allowed, mp_arg_val_t *out_vals);
// TypeError: `where` takes n_min..n_max (positional) arguments, got n_given.
NORETURN void ncnn_mp_raise_arg_count(const char *where, size_t n_min, size_t n_max, size_t n_given, bool positional);

// ---------------------------------------------------------------------------
// Uses (use.c): a call that hands ncnn an object's native handle, and may run Python
// before ncnn is done with it, takes a use of the object for the whole call; whatever
// would free or move what the handle points at (close(), release(), new storage) is
// refused meanwhile, with one RuntimeError, whichever method, callback or thread tries.
typedef struct _ncnn_mp_use_t {
    nlr_jump_callback_node_t leave;  // first: the callback gets its address
    int **users;                     // the counts taken (`one`, or a GC array)
    int *one;
    size_t n, capacity;
} ncnn_mp_use_t;
// Opens a set of up to `capacity` uses, given back by ncnn_mp_use_end or when the caller
// raises (an nlr jump callback). May raise (allocation) only here.
void ncnn_mp_use_begin(ncnn_mp_use_t *u, size_t capacity);
// Counts one more use in *users, if *handle (read under the same lock) is set: false, and
// nothing taken, if the object was closed. _locked: under the caller's lock, unconditionally.
bool ncnn_mp_use_add(ncnn_mp_use_t *u, int *users, void *const *handle);
// Room for `more` uses (may raise): before ncnn_mp_use_add_locked, which takes no room itself.
void ncnn_mp_use_reserve(ncnn_mp_use_t *u, size_t more);
void ncnn_mp_use_add_locked(ncnn_mp_use_t *u, int *users);
void ncnn_mp_use_end(ncnn_mp_use_t *u);
// What close(), release() and the like raise when they read (under the lock) users > 0:
// RuntimeError "WHERE: a call in progress uses it ...".
NORETURN void ncnn_mp_raise_in_use(const char *where);

// ---------------------------------------------------------------------------
// Lending (lend.c): what ncnn hands a Python callback lives only as long as the callback.

// How a kind of lent object expires; each class that lends defines one.
typedef struct {
    void (*expire)(mp_obj_t obj);  // forget ncnn's handle (and free what depends on it)
    bool (*holds)(mp_obj_t obj, const void *p);  // its storage holds address p (Mats), or NULL
} ncnn_mp_lent_kind_t;
typedef struct {
    mp_obj_t obj;  // MP_OBJ_NULL: none
    const ncnn_mp_lent_kind_t *kind;
} ncnn_mp_lent_item_t;
static inline void ncnn_mp_lent_item_expire(ncnn_mp_lent_item_t *item) {
    mp_obj_t obj = item->obj;
    if (obj != MP_OBJ_NULL) {
        item->obj = MP_OBJ_NULL;
        item->kind->expire(obj);
    }
}
// A callback's lent objects (on its C stack; grown on the heap past `small`).
typedef struct _ncnn_mp_lent_t {
    ncnn_mp_lent_item_t small[6];
    ncnn_mp_lent_item_t *items;
    size_t n, cap;
} ncnn_mp_lent_t;
void ncnn_mp_lent_init(ncnn_mp_lent_t *lent);
// Lists obj, to expire (newest first) when the callback returns. May raise (allocation).
mp_obj_t ncnn_mp_lend(ncnn_mp_lent_t *lent, mp_obj_t obj, const ncnn_mp_lent_kind_t *kind);
// The list of the calling thread's open callback that lent an object whose storage holds p,
// or NULL (a memoryview of a lent blob carries no trace of the blob but its address).
// Whether [p, p + len) lies where the board keeps what never changes (flash, a ROMFS image):
// a board's glue overrides it (ci/mcu/board.c), elsewhere none (net_load.c).
bool ncnn_mp_port_read_only(const void *p, size_t len);
ncnn_mp_lent_t *ncnn_mp_lent_holding(const void *p);
// ValueError naming `where` if a lent object was lent to another thread than the caller.
void ncnn_mp_check_owner(const void *owner, const char *where);

// ---------------------------------------------------------------------------
// Calls in progress (calls.c).

// Every public method that lets ncnn call back into Python brackets that call with
// begin/end: an exception a callback raised is kept in the calling thread's innermost call
// and re-raised by ncnn_mp_call_end once ncnn has returned. Records live on the C stack:
// nothing may raise between begin and stop.
// On a port with a GIL, begin lets it go (other threads run while ncnn computes) and
// stop takes it back; a callback takes it for its Python (ncnn_mp_call_take_gil).
typedef struct _ncnn_mp_call_t {
    struct _ncnn_mp_call_t *next;  // calls in progress, of every thread
    const void *thread;
    mp_obj_t error;
    ncnn_mp_lent_t *lent;  // the open callback's lent objects, under this call, or NULL
    // A load_model(copy=False): the buffer ncnn keeps weights in (the trampoline gives it to
    // the ModelBin it lends a custom layer's load_model), else MP_OBJ_NULL.
    mp_obj_t weights;
    // The Option lent to the forwards under this call: ncnn hands every layer of an extract
    // the same one, so one wrapper serves them all, replaced (and the old one expired) when
    // a forward gets another, expired when ncnn returns.
    ncnn_mp_lent_item_t option;
    // A layer the shape guard refused under this call (refusal.rule NCNN_MP_FITS: none).
    ncnn_mp_shape_refusal_t refusal;
    // The callable Extractor.extract(hook=) calls before each layer (calls.c), or MP_OBJ_NULL.
    mp_obj_t hook;
    bool gil_released;
} ncnn_mp_call_t;

void ncnn_mp_call_begin(ncnn_mp_call_t *call);
// begin in two parts, for a method that links its call under a lock it takes anyway
// (Extractor.extract): link (under the caller's lock), then leave_gil (outside it).
void ncnn_mp_call_link(ncnn_mp_call_t *call);
void ncnn_mp_call_leave_gil(ncnn_mp_call_t *call);
// Gives a linked call a hook to call before each layer (Extractor.extract's hook=).
void ncnn_mp_call_hook(ncnn_mp_call_t *call, mp_obj_t hook);
// The calling thread's innermost call in progress, or NULL.
ncnn_mp_call_t *ncnn_mp_call_current(void);
// (Under the lock.) The same; and the next call out of `call` in its thread, or NULL.
ncnn_mp_call_t *ncnn_mp_call_current_locked(void);
ncnn_mp_call_t *ncnn_mp_call_outer_locked(const ncnn_mp_call_t *call);
// A callback's start, under one lock: root_get(key), and in *call the innermost call of
// `thread` (ncnn_mp_thread()) in progress, or NULL.
mp_obj_t ncnn_mp_root_get_in_call(const void *key, const void *thread, ncnn_mp_call_t **call);
// For a callback under `call` (the thread's current one, or NULL): takes the GIL if the call
// let it go (true: give it back after).
bool ncnn_mp_call_take_gil(ncnn_mp_call_t *call);
void ncnn_mp_call_give_gil(void);
// Inside a garbage collection (a finaliser), where no Python may run and nothing allocate.
// A heap the user locked (micropython.heap_lock()) is not that: Python layers still run
// there, and what they allocate fails with MemoryError.
bool ncnn_mp_in_collection(void);
// Once ncnn has returned: call->error becomes the callbacks' exception, else a
// KeyboardInterrupt that came meanwhile (taken, so it is raised once, here). A method
// that got something from ncnn frees it if call->error is set, then calls call_raise.
void ncnn_mp_call_stop(ncnn_mp_call_t *call);
// stop in two parts: returned (the GIL back, call->error set as stop sets it) once ncnn
// has returned, unlink under a lock the caller takes anyway, before it raises call->error.
void ncnn_mp_call_returned(ncnn_mp_call_t *call);
void ncnn_mp_call_unlink(ncnn_mp_call_t *call);
void ncnn_mp_call_raise(ncnn_mp_call_t *call);
// stop, then raise: for methods that got nothing to free.
void ncnn_mp_call_end(ncnn_mp_call_t *call);

// ---------------------------------------------------------------------------
// Callbacks (lend.c): Python run by ncnn, guarded.

// One callback's frame: its layer, the Python instance behind it, what it lent.
typedef struct {
    ncnn_layer_t layer;
    mp_obj_t instance;
    ncnn_mp_lent_t lent;
    ncnn_mp_call_t *call;         // the thread's call the callback runs under (NULL: none)
    ncnn_mp_lent_t *outer_lent;   // what call->lent was before this frame
    bool gil;  // the frame took the GIL back from the call that released it
} ncnn_mp_frame_t;
// Opens a callback of `instance` (MP_OBJ_NULL: the Python layer behind `layer`, found in the
// roots), and takes the GIL if the public method that entered ncnn let it go. False when
// there is none, or when Python may not run now: inside a garbage collection, or in a
// thread MicroPython does not know.
bool ncnn_mp_frame_open(ncnn_mp_frame_t *f, ncnn_layer_t layer, mp_obj_t instance);
// Ends it: expires what was lent; keeps the exception of `failed` (if not NULL) for the
// public method; lets the GIL go again if the frame took it. 0, or -1 if it failed.
int ncnn_mp_frame_close(ncnn_mp_frame_t *f, nlr_buf_t *failed, qstr method);
// Keeps exc as the calling thread's current call's exception (the first one wins), with a
// traceback line naming `layer` (if not NULL) and `method`.
void ncnn_mp_keep_error(mp_obj_t exc, ncnn_layer_t layer, qstr method);
// The guarded call: fun(instance, arg) as a callback from ncnn, in a frame, under nlr_push.
// An exception is kept for the public method and fun's caller gets false, as it does when
// Python may not run now: then fun did not run.
bool ncnn_mp_callback(mp_obj_t instance, ncnn_layer_t layer, qstr method, void (*fun)(mp_obj_t instance, void *arg),
    void *arg);

// ---------------------------------------------------------------------------
// Natives shared by several Python objects (allocator.c, net_native.c, datareader.c).
//
// MicroPython runs finalisers in heap order, not in dependency order: when a Mat
// and the Allocator it was allocated from become garbage in the same collection,
// either __del__ may run first. Every ncnn object whose *destruction* calls into
// another one therefore holds a counted reference on a small C-heap record of the
// other, never just a Python reference. Only Allocators and Nets are depended on
// like that (a Mat frees through its allocator; an Extractor tears down through
// its Net), so only they have such a record.

typedef struct _ncnn_mp_allocator_native_t {
    int refs;  // under the lock
    ncnn_allocator_t handle;
    bool arena;  // Allocator(arena=...): its blocks come from its own block, not the C heap
} ncnn_mp_allocator_native_t;
// A Mat of `bytes` from `a` (NULL: ncnn's default) can be asked for: ncnn_mp_check_alloc, or
// for an arena only its bound (allocator.c).
void ncnn_mp_check_mat_alloc(unsigned long long bytes, const ncnn_mp_allocator_native_t *a, const char *where);

ncnn_mp_allocator_native_t *ncnn_mp_allocator_native_ref(ncnn_mp_allocator_native_t *a);
void ncnn_mp_allocator_native_unref(ncnn_mp_allocator_native_t *a);
// Replace the reference held in *slot by a new reference to a (which may be NULL).
void ncnn_mp_allocator_native_assign(ncnn_mp_allocator_native_t **slot, ncnn_mp_allocator_native_t *a);

// The three allocators an ncnn Option points at, as an array indexed by kind.
typedef enum {
    NCNN_MP_BLOB_ALLOCATOR, NCNN_MP_WORKSPACE_ALLOCATOR, NCNN_MP_KVCACHE_ALLOCATOR, NCNN_MP_ALLOCATOR_KINDS
} ncnn_mp_allocator_kind_t;
typedef ncnn_mp_allocator_native_t *ncnn_mp_allocator_set_t[NCNN_MP_ALLOCATOR_KINDS];
// dst holds references to what src holds (NULL src: none).
void ncnn_mp_allocator_set_assign(ncnn_mp_allocator_set_t dst, ncnn_mp_allocator_native_t *const *src);
// (Under the lock.) dst, holding none, takes references to what src holds.
void ncnn_mp_allocator_set_share(ncnn_mp_allocator_set_t dst, ncnn_mp_allocator_native_t *const *src);
// Points opt's three allocators at the set's (NULL: ncnn's default).
void ncnn_mp_allocator_set_apply(ncnn_option_t opt, ncnn_mp_allocator_native_t *const *set);

typedef struct _ncnn_mp_extractor_native_t ncnn_mp_extractor_native_t;
// A custom layer type registered on a Net (trampoline.c; freed by net_native.c): what ncnn's creator callback
// gets as userdata. C heap, freed with the Net; `creator` is kept alive in a GC root.
typedef struct _ncnn_mp_factory_t {
    mp_obj_t creator;
    struct _ncnn_mp_factory_t *next;
    char name[];  // the type name, which ncnn keeps a pointer to
} ncnn_mp_factory_t;


// Where a Net is in its life. ncnn destroys a layer with the destroyer registered for its
// type *now*, so types may be registered only while it has no layers; it may run only READY.
typedef enum {
    NCNN_MP_NET_EMPTY,          // new, or cleared: no layers, none prepared with the option
    NCNN_MP_NET_PARAMS_FAILED,  // the last param load failed: ncnn dropped the layers, but
                                // may have prepared some with the option's pipeline flags
    NCNN_MP_NET_PARAMS,         // layers made; no weights loaded since (or loading them failed):
                                // a layer whose load_model or create_pipeline never ran crashes in forward
    NCNN_MP_NET_READY,          // weights loaded: ncnn may run it
} ncnn_mp_net_stage_t;

// What a model load did with the bytes of its .bin (Net.weights_info()).
typedef struct {
    size_t in_place;   // weights ncnn keeps pointing into the buffer (load_model(copy=False))
    size_t copied;     // bytes read into ncnn's memory as they are (every byte, copying)
    size_t converted;  // weights turned into new fp32 Mats (fp16, bf16, codebook-quantised)
    size_t unused;     // bytes after the last weight the model asked for (a wrong .bin?)
    bool short_read;   // a read asked for more than was left: the .bin is too short
    bool stream;       // read through a Python reader: what is left after the weights is unknown
    uint8_t pending;   // in place: the next chunks are converted (after such a weight tag)
} ncnn_mp_weights_t;

typedef struct _ncnn_mp_net_native_t {
    int refs;  // under the lock
    ncnn_net_t handle;
    // Allocators the net's option points at (set through net.opt / net.option).
    ncnn_mp_allocator_set_t allocators;
    // Live extractors: a load or clear destroys them first (ncnn's Extractor
    // points into the net's blobs and local allocators). Under the lock.
    ncnn_mp_extractor_native_t *extractors;
    uint8_t stage;  // ncnn_mp_net_stage_t
    // The blobs have names: the last param load was a text one that succeeded. ncnn's
    // load_param_bin leaves the name lists empty while the index lists are filled, and
    // ncnn_net_get_{input,output}_name(i) would then read past the end of a std::vector.
    bool named;
    // Who is inside ncnn on this net, under the lock: n > 0 extractors running or being
    // used (any threads), -1 a load, clear or close (one thread, alone). A custom layer
    // calling back may not clear, reload or close the net that runs it, nor may another thread.
    int users;
    ncnn_mp_factory_t *factories;
    // The last model load (Net.weights_info): what ncnn_mp's reader counted (false: ncnn
    // read a file itself), and the C heap the load left in use (-1: the port cannot say).
    bool weights_counted;
    ncnn_mp_weights_t weights;
    long weights_heap;
    // Set while the roots table holds, under the key &n->kept_weights, the list of the
    // buffers given to load_model(copy=False) since the layers were made: layers point
    // into them until ncnn destroys the layers (clear, a param load, the net's end).
    bool kept_weights;
    // A model load ran since the layers were made: their pipelines may exist, and the next
    // load ends them first (ncnn_mp_cxx_destroy_pipelines).
    bool pipelines;
    // The longest chain of layers since the last param load (stack.c: what an extract needs).
    int depth;
} ncnn_mp_net_native_t;

ncnn_mp_net_native_t *ncnn_mp_net_native_ref(ncnn_mp_net_native_t *n);
void ncnn_mp_net_native_unref(ncnn_mp_net_native_t *n);
// Destroys the net whose last reference was just dropped (under the lock, by the caller):
// ncnn runs its custom layers' destroy_pipeline.
void ncnn_mp_net_native_destroy(ncnn_mp_net_native_t *n);
// Enters ncnn's use of the net, shared (extractors) or alone (load, clear, close), under
// the lock the caller holds (with other state it changes in one go): try_enter tells
// whether it entered; the caller raises ncnn_mp_net_raise_busy (RuntimeError naming
// `where`) if that collides with a use in progress. leave: exit under the lock.
void ncnn_mp_net_leave(ncnn_mp_net_native_t *n);
bool ncnn_mp_net_try_enter(ncnn_mp_net_native_t *n, bool alone);
void ncnn_mp_net_exit(ncnn_mp_net_native_t *n);
NORETURN void ncnn_mp_net_raise_busy(const char *where);
// RuntimeError naming `where` if anyone is inside ncnn on the net.
void ncnn_mp_net_check_idle(ncnn_mp_net_native_t *n, const char *where);
// Destroy every ncnn Extractor still made from this net (before a load or clear).
void ncnn_mp_net_native_drop_extractors(ncnn_mp_net_native_t *n);
// Keeps `buffer` alive for as long as the net's layers may point into it (copy=False).
void ncnn_mp_net_keep_weights(ncnn_mp_net_native_t *n, mp_obj_t buffer);
// Once ncnn destroyed the layers: the kept buffers go. Never allocates (finalisers call it).
void ncnn_mp_net_release_weights(ncnn_mp_net_native_t *n);
// "layer 'name' (Type)" of layer i of the net for a message, or as refusal r (or NULL) recorded
// it where the net no longer has that layer (a failed load_param). With the net entered.
void ncnn_mp_layer_label(vstr_t *out, ncnn_net_t net, int i, const ncnn_mp_shape_refusal_t *r);

struct _ncnn_mp_extractor_native_t {
    ncnn_extractor_t handle;           // NULL once its net was cleared or reloaded
    bool running;                      // inside ncnn_extractor_extract, under the lock
    bool extracted;                    // an extract ran on `handle`: ncnn may have freed input blobs
    ncnn_mp_net_native_t *net;         // counted
    ncnn_mp_allocator_set_t allocators;  // what its ncnn option points at (the net's, or set_option's), counted
    ncnn_mp_extractor_native_t *next;  // in net->extractors
};

// A reader that ncnn reads through our callbacks: bounded memory, an endless source of
// zeros (see datareader.c for why ncnn's own memory reader is not used), or a Python
// subclass's read(n) (`python`).
typedef struct _ncnn_mp_reader_t {
    ncnn_datareader_t handle;
    const uint8_t *base;
    size_t len;
    size_t offset;
    char *text;         // memory: NUL-terminated copy of base[text_start:len] for scanf, made on first scan;
                        // python: the look-ahead, bytes read() returned that no scan or read took yet
    size_t text_start;  // python: where the look-ahead's bytes start in `text`
    size_t text_len;    // python: how many there are (text[text_start + text_len] is a NUL)
    size_t text_cap;    // python: the bytes `text` holds room for
    // A Python reader: the DataReader subclass instance whose read(n) ncnn reads through, set
    // by every use (ncnn_mp_reader_use), which keeps it alive while ncnn may call back.
    mp_obj_t instance;
    bool zeros;
    bool python;
    ncnn_mp_weights_t counts;
    struct _ncnn_mp_reader_t *next;
} ncnn_mp_reader_t;

void ncnn_mp_reader_open(ncnn_mp_reader_t *r, const void *base, size_t len, bool zeros);
void ncnn_mp_reader_close(ncnn_mp_reader_t *r);

// ---------------------------------------------------------------------------
// Python objects.

extern const mp_obj_type_t ncnn_mp_type_Allocator;
extern const mp_obj_type_t ncnn_mp_type_Option;
extern const mp_obj_type_t ncnn_mp_type_Mat;
extern const mp_obj_type_t ncnn_mp_type_Net;
extern const mp_obj_type_t ncnn_mp_type_Extractor;
extern const mp_obj_type_t ncnn_mp_type_DataReader;
extern const mp_obj_type_t ncnn_mp_type_ParamDict;
extern const mp_obj_type_t ncnn_mp_type_ModelBin;
extern const mp_obj_type_t ncnn_mp_type_Layer;


// An Option owns its ncnn_option_t, is a view of a Net's option (`net`, counted),
// or is lent by ncnn for one callback (its handle is NULLed when the callback ends).
typedef enum {
    NCNN_MP_OPTION_OWNED,
    NCNN_MP_OPTION_NET_VIEW,
    NCNN_MP_OPTION_BORROWED,
} ncnn_mp_option_kind_t;

typedef struct _ncnn_mp_option_obj_t {
    mp_obj_base_t base;
    ncnn_option_t handle;
    ncnn_mp_net_native_t *net;
    // The allocators an owned Option points at (counted): an Allocator closed by
    // Python stays alive while an Option still hands it to ncnn.
    ncnn_mp_allocator_set_t allocators;
    const void *owner;  // lent: the thread
    uint8_t kind;
} ncnn_mp_option_obj_t;

// How a Mat wrapper relates to its ncnn_mat_t.
typedef enum {
    NCNN_MP_MAT_OWNED,     // created by ncnn_mp; destroyed in __del__
    NCNN_MP_MAT_BORROWED,  // ncnn's, lent for one callback; `handle` is NULLed when it ends
    NCNN_MP_MAT_LENT_VIEW, // ncnn_mp's, but computed from a lent Mat whose storage it may
                           // share (ncnn's pools, which die with the net): it is lent
                           // too, and its handle is destroyed when the callback ends
} ncnn_mp_mat_kind_t;

typedef struct _ncnn_mp_mat_obj_t {
    mp_obj_base_t base;
    ncnn_mat_t handle;
    // What the data may point into and must outlive this Mat: the Python buffer of
    // Mat(data=...), the Extractor a result came from, the Mat(s) a result was computed
    // from (a reshape, a view, a layer's output may share their storage). A Mat is
    // usable only while every Mat along its `keep` chain is (ncnn_mp_get_mat).
    mp_obj_t keep;
    // Lent (BORROWED or LENT_VIEW): the callback's list of lent objects, and the thread.
    // `lent` is valid only while `handle` is set.
    ncnn_mp_lent_t *lent;
    const void *owner;
    // The allocator the data was allocated from (counted), or NULL for ncnn's default.
    ncnn_mp_allocator_native_t *allocator;
    // A Mat lying over storage it does not count (Mat(data=buf), batch(b)): where the
    // storage of `keep` was when the Mat was made. A bytearray that grew, or a Mat given
    // new storage, moved it: the Mat is unusable from then on.
    const void *external;
    int users;  // calls handing its storage to ncnn now (use.c), under the lock
    // The scale an int8 Mat was quantized with (Mat.from_pixels_int8), checked against the
    // layer that reads it when it becomes an input; 0: not known (any other Mat).
    float int8_scale;
    uint8_t kind;
    bool readonly;
} ncnn_mp_mat_obj_t;

typedef struct _ncnn_mp_net_obj_t {
    mp_obj_base_t base;
    ncnn_mp_net_native_t *native;  // counted
} ncnn_mp_net_obj_t;

typedef struct _ncnn_mp_layer_obj_t {
    mp_obj_base_t base;
    ncnn_layer_t handle;        // NULL once ncnn destroyed a layer it owned
    ncnn_option_t pipeline_opt; // a copy of the Option create_pipeline ran with, or NULL
    uint8_t stage;              // standalone use: 0 new, 1 params loaded, 2 weights loaded
    bool owned;                 // ncnn_mp destroys the handle (false once a Net owns it)
    bool custom;                // the base of a Python subclass (Layer() without a type)
    // ncnn sizes a layer's bottom/top shape lists only after its load_param: until then
    // reading one would index an empty std::vector.
    bool shapes_ready;
} ncnn_mp_layer_obj_t;

// ---------------------------------------------------------------------------
// Checked getters: accept the class or a Python subclass, raise TypeError naming
// `where` ("Class.method") otherwise, and ValueError for an expired or closed object.

ncnn_mp_mat_obj_t *ncnn_mp_get_mat(mp_obj_t obj, const char *where);
ncnn_mat_t ncnn_mp_get_mat_handle(mp_obj_t obj, const char *where);
// A call's use of a Mat and of every Mat it may share storage with (its keep chain): none of
// them gets new storage or is released until ncnn_mp_use_end. The Mat's handle.
ncnn_mat_t ncnn_mp_mat_use(ncnn_mp_use_t *u, mp_obj_t obj, const char *where);
// Whether ncnn counts references to the Mat's storage. Not for a Mat over a Python buffer
// (Mat(data=...)), a batch view, or a Mat sharing such storage: ncnn's Net dereferences a
// blob's reference count when an in-place layer takes it (NULL there: a crash).
bool ncnn_mp_mat_counted(mp_obj_t mat);
ncnn_mp_option_obj_t *ncnn_mp_get_option(mp_obj_t obj, const char *where);
// How a Mat ncnn_mp makes from a computation is wrapped. Every method that returns
// such a Mat fills one of these first (from the Option or the allocator= argument it
// computes with, and the Mats it computes from) and wraps the result through it, so no
// method can forget which allocator the result holds or what it may share:
// - `opt`: the Option handle to give ncnn. A lent Option's allocators are ncnn's own
//   pools, which die with the net: its flags are copied into a new Option that uses the
//   default allocator.
// - `allocator`: what the result's data comes from; the result holds it (counted).
// - `source`: the Mat, or list/tuple of Mats, the result was computed from. ncnn may
//   hand back their very storage (a reshape, a zero border, a Flatten of a flat Mat,
//   Split or Noop layers): the result keeps them alive, is read-only where a source is,
//   and is lent where a source is lent (it expires with the callback).
typedef struct {
    ncnn_option_t opt;
    ncnn_mp_allocator_native_t *allocator;
    mp_obj_t source;
} ncnn_mp_result_t;
// From an Option argument (opt_in) that ncnn computes the result with.
void ncnn_mp_result_from_option(ncnn_mp_result_t *r, mp_obj_t opt_in, mp_obj_t source, const char *where);
// From an allocator= argument (an Allocator or None).
void ncnn_mp_result_from_allocator(ncnn_mp_result_t *r, mp_obj_t alloc_in, mp_obj_t source, const char *where);
// Wraps a new ncnn_mat_t that ncnn_mp owns from now on. A NULL handle (ncnn's C API
// returns NULL when allocation fails) raises MemoryError naming `where`.
mp_obj_t ncnn_mp_result_wrap(const ncnn_mp_result_t *r, ncnn_mat_t handle, const char *where);
// Wraps a new ncnn_mat_t whose data lies in the storage of the Python object `buffer`
// (starting at `base`, where buffer's storage is now): the Mat keeps buffer alive, is
// unusable once that storage moves, and is read-only where `readonly` or buffer's Mats are.
mp_obj_t ncnn_mp_mat_wrap_over_buffer(ncnn_mat_t handle, mp_obj_t buffer, const void *base, bool readonly, const char *where);
// The allocator of the Mat object `mat` if h's data lies in mat's storage, else `otherwise`.
ncnn_mp_allocator_native_t *ncnn_mp_mat_data_allocator(ncnn_mat_t h, mp_obj_t mat, ncnn_mp_allocator_native_t *otherwise);
// `n` floats from a sequence of numbers or a buffer of packed float32 into out (mat.c), or
// NULL for None: Mat.substract_mean_normalize's and from_pixels_int8's mean and norm.
const float *ncnn_mp_get_floats(mp_obj_t obj, size_t n, float *out, const char *where, const char *name);
// None -> NULL (ncnn's default allocator).
ncnn_mp_allocator_native_t *ncnn_mp_get_allocator_native_or_none(mp_obj_t obj, const char *where);

// Mat's image functions (mat_pixels.c; from_pixels, from_pixels_resize and to_pixels convert
// through ncnn's pixel code or mat_camera.c, by the pixel type), for Mat's table in mat.c.
#if NCNN_MP_HAS_PIXELS || NCNN_MP_HAS_CAMERA
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_from_pixels_obj;
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_from_pixels_resize_obj;
extern const ncnn_mp_method_t ncnn_mp_Mat_to_pixels_obj;
// Mat.PIXEL_* constants: ncnn's formats, and format | target << 16 for conversions.
#define NCNN_MP_PIXEL_TYPES(X) \
    X(RGB, 1) X(BGR, 2) X(GRAY, 3) X(RGBA, 4) X(BGRA, 5) \
    X(RGB2BGR, 1 | 2 << 16) X(RGB2GRAY, 1 | 3 << 16) X(RGB2RGBA, 1 | 4 << 16) X(RGB2BGRA, 1 | 5 << 16) \
    X(BGR2RGB, 2 | 1 << 16) X(BGR2GRAY, 2 | 3 << 16) X(BGR2RGBA, 2 | 4 << 16) X(BGR2BGRA, 2 | 5 << 16) \
    X(GRAY2RGB, 3 | 1 << 16) X(GRAY2BGR, 3 | 2 << 16) X(GRAY2RGBA, 3 | 4 << 16) X(GRAY2BGRA, 3 | 5 << 16) \
    X(RGBA2RGB, 4 | 1 << 16) X(RGBA2BGR, 4 | 2 << 16) X(RGBA2GRAY, 4 | 3 << 16) X(RGBA2BGRA, 4 | 5 << 16) \
    X(BGRA2RGB, 5 | 1 << 16) X(BGRA2BGR, 5 | 2 << 16) X(BGRA2GRAY, 5 | 3 << 16) X(BGRA2RGBA, 5 | 4 << 16)
#endif
#if NCNN_MP_HAS_PIXELS
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_from_pixels_roi_obj;
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_from_pixels_roi_resize_obj;
extern const ncnn_mp_method_t ncnn_mp_Mat_to_pixels_resize_obj;
#endif
#if NCNN_MP_HAS_CAMERA
// Camera frame formats (mat_camera.c), numbered past ncnn's; the Mat's channel order (a
// plain format, default RGB) goes in the high 16 bits: PIXEL_YUYV | PIXEL_BGR << 16.
#define NCNN_MP_CAMERA_TYPES(X) X(RGB565, 16) X(RGB565_BE, 17) X(YUYV, 18) X(NV12, 19) X(NV21, 20)
// Whether a from_pixels/to_pixels type is a camera format's (then the two below take the call).
bool ncnn_mp_camera_type(mp_obj_t type);
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_from_pixels_int8_obj;
mp_obj_t ncnn_mp_camera_from_pixels(size_t n_args, const mp_obj_t *args, bool resize, const char *where);
mp_obj_t ncnn_mp_camera_to_pixels(size_t n_args, const mp_obj_t *args, const char *where);
#endif
#if NCNN_MP_HAS_DRAWING
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_draw_rectangle_obj;
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_draw_circle_obj;
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_draw_line_obj;
extern const mp_rom_obj_static_class_method_t ncnn_mp_Mat_draw_text_obj;
#endif

// Objects ncnn lends a callback, wrapped and listed in the callback's `lent` list: they
// expire (their handle NULL) when it returns, and belong to its thread until then.
// A lent Mat (of ncnn's blob); at the callback's end it forgets ncnn's handle, and the lent
// views computed from it destroy their own.
mp_obj_t ncnn_mp_mat_lend(ncnn_mat_t handle, ncnn_mp_lent_t *lent);
mp_obj_t ncnn_mp_paramdict_lend(ncnn_paramdict_t handle, ncnn_mp_lent_t *lent);
// in_place: the buffer of a load_model(copy=False) the weights lie in (its load() hands out
// Mats over it), or MP_OBJ_NULL.
mp_obj_t ncnn_mp_modelbin_lend(ncnn_modelbin_t handle, mp_obj_t in_place, ncnn_mp_lent_t *lent);
mp_obj_t ncnn_mp_option_lend(ncnn_option_t handle, ncnn_mp_lent_t *lent);
// The Option lent in `slot` (a call's: one wrapper serves every layer of an extract) if it
// wraps `handle`; else a new lent one, and the old one expires.
mp_obj_t ncnn_mp_option_lend_to_call(ncnn_option_t handle, ncnn_mp_lent_item_t *slot);

// A Python object holding an Option handle owned by someone else (a Net's option view).
mp_obj_t ncnn_mp_option_wrap_net_view(ncnn_mp_net_native_t *net);

// A load's use of a DataReader, one of the uses in u (ncnn_mp_use_begin'd by the caller):
// close() refuses until ncnn_mp_use_end (ncnn holds the handle, and a Python reader's read()
// could close its own reader). ValueError if it was closed, TypeError if it has no source
// and its class no read(n). *counted: the reader that counts what ncnn read (may be NULL).
ncnn_datareader_t ncnn_mp_reader_use(ncnn_mp_use_t *u, mp_obj_t obj, ncnn_mp_reader_t **counted, const char *where);

ncnn_paramdict_t ncnn_mp_get_paramdict_handle(mp_obj_t obj, const char *where);

ncnn_modelbin_t ncnn_mp_get_modelbin_handle(mp_obj_t obj, const char *where);
// A call's use of a ModelBin and of the DataReader it reads through (two of u's uses).
ncnn_modelbin_t ncnn_mp_modelbin_use(ncnn_mp_use_t *u, mp_obj_t obj, const char *where);
// After a load through a ModelBin(from_mat_array=...) failed: ValueError naming the Mat
// that did not fit the read, if one did not (else nothing).
void ncnn_mp_modelbin_raise_refused(mp_obj_t obj, const char *where);

ncnn_mp_layer_obj_t *ncnn_mp_get_layer(mp_obj_t obj, const char *where);

// Options.
void ncnn_mp_option_copy_flags(ncnn_option_t dst, const ncnn_option_t src);
// The first flag that layers bake in at load time and that differs between a and b, or MP_QSTRnull.
qstr ncnn_mp_option_pipeline_mismatch(const ncnn_option_t a, const ncnn_option_t b);
// A new Option (collected like any) with src's flags and ncnn's default allocators.
ncnn_option_t ncnn_mp_option_new_copy(const ncnn_option_t src);

// Loading (net_load.c): runs ncnn's loader of `kind` on src (a path, a DataReader or a
// buffer; in_place: copy=False) for a Net method that has n entered alone.
typedef enum { NCNN_MP_LOAD_PARAM, NCNN_MP_LOAD_PARAM_BIN, NCNN_MP_LOAD_MODEL } ncnn_mp_load_kind_t;
void ncnn_mp_net_load(ncnn_mp_net_native_t *n, mp_obj_t src, ncnn_mp_load_kind_t kind, bool in_place, const char *where);

// Net.create_extractor's work: checks and makes it under one lock.
mp_obj_t ncnn_mp_extractor_new(mp_obj_t net_in, ncnn_mp_net_obj_t *net);

// ---------------------------------------------------------------------------
// The trampoline (trampoline.c): Layer subclasses written in Python, run by ncnn.

ncnn_layer_t ncnn_mp_trampoline_layer_create(void);
// A layer's flags for ncnn (support_*, one_blob_only): Layer's attributes, and what a Python
// subclass declares in __init__ (copied when ncnn makes its layer).
typedef struct {
    qstr name;
    int (*get)(const ncnn_layer_t);
    void (*set)(ncnn_layer_t, int);
} ncnn_mp_layer_flag_t;
const ncnn_mp_layer_flag_t *ncnn_mp_layer_flag(qstr name);  // or NULL
void ncnn_mp_register_custom_layer(ncnn_mp_net_native_t *net, mp_obj_t type, mp_obj_t creator, const char *where);

#endif // NCNN_MP_H

// The C++ seam, exceptions (cxx_seam.h): ncnn allocates with `new` and std containers in places (the font a
// draw_text scales, a resize's tables, a param file's layer list), and on the desktop a
// failing `new` throws std::bad_alloc. Nothing in ncnn catches it, and an exception that
// reaches a C frame without a handler ends the process (std::terminate). Every ncnn_mp call
// into those parts of ncnn goes through ncnn_mp_cxx_catch, which catches it here and says so;
// the C side raises MemoryError. This file alone is built with exceptions (micropython.mk);
// where ncnn is built without them (the boards: NCNN_DISABLE_EXCEPTION, no C++ library
// exceptions) it calls straight through, and the sizes checked before each call are the guard.
#include "cxx_seam.h"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <new>

extern "C" int ncnn_mp_cxx_catch(void (*fn)(void *arg), void *arg) {
    try {
        fn(arg);
        return 0;
    } catch (const std::bad_alloc &) {
        return NCNN_MP_CAUGHT_BAD_ALLOC;
    } catch (...) {
        return NCNN_MP_CAUGHT_OTHER;
    }
}
#else
extern "C" int ncnn_mp_cxx_catch(void (*fn)(void *arg), void *arg) {
    fn(arg);
    return 0;
}
#endif

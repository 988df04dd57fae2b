// SPDX-License-Identifier: MIT
// The C++ seam, exceptions (cxx_seam.h): ncnn allocates with `new` and std containers in places
// (the font a draw_text scales, a resize's tables, a param file's layer list, an Interp's
// coordinate tables), and on the desktop a failing `new` throws std::bad_alloc, a negative
// array size std::bad_array_new_length. Nothing in ncnn catches them, and an exception that
// reaches a C frame without a handler ends the process (std::terminate). Every ncnn_mp call
// into ncnn goes through ncnn_mp_cxx_catch, which catches it here and says what it was; the
// C side raises (ncnn_mp_raise_caught). This file alone is built with exceptions
// (micropython.mk); where ncnn is built without them (the boards: NCNN_DISABLE_EXCEPTION, no
// C++ library exceptions) it calls straight through, and the checks made before ncnn
// allocates are the guard (docs/internals.md "C++ at the edges").
#include "cxx_seam.h"

#if NCNN_MP_CXX_CATCHES && (defined(__cpp_exceptions) || defined(__EXCEPTIONS))
#include <new>
#include <stdexcept>

extern "C" int ncnn_mp_cxx_catch(void (*fn)(void *arg), void *arg) {
    try {
        fn(arg);
        return 0;
    } catch (const std::bad_array_new_length &) {  // (a bad_alloc: asked first)
        return NCNN_MP_CAUGHT_BAD_SIZE;
    } catch (const std::length_error &) {
        return NCNN_MP_CAUGHT_BAD_SIZE;
    } catch (const std::bad_alloc &) {
        return NCNN_MP_CAUGHT_BAD_ALLOC;
    } catch (...) {
        return NCNN_MP_CAUGHT_OTHER;
    }
}
#endif  // (else cxx_seam.h calls straight through)

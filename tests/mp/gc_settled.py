# SPDX-License-Identifier: MIT
# Stores that outlast a collection another thread has in progress, for test code that runs
# on the Unix port's threads without a GIL (no ncnn_mp here: tests/gc_store_race.py uses it
# too).
#
# Without a GIL, MicroPython's collector marks what the roots reach (module globals, ncnn_mp's
# roots table and the Python layers in it) first and scans each thread's stack last, one
# thread at a time, while the other threads run on. A new object that a thread stores into
# an object already marked, and then holds nowhere else, is not marked: the collection frees
# it, and the attribute or item points at whatever is made there next (a float read back as
# a tuple). ncnn_mp's own stores wait out a collection in progress (ncnn_mp_gc_settle,
# ncnn_mp/binding/state.c); these do the same for a store of Python code: the value stays an argument
# of this frame, on this thread's stack, until an allocation has taken the collector's lock,
# which a collection holds from its start to its end.
#
# The store itself must not allocate: a new attribute or key grows the object's table, and
# the new table, held by nothing but the store's C frame, is lost the same way (an attribute
# gone: "'Tag' object has no attribute 'scale'"). So the attribute or item must be there
# already: made in __init__ (before ncnn_mp roots the layer, when only the creating thread's
# stack holds it), or a list made long enough first. docs/limits.md, tests/gc_store_race.py.


def setattr_settled(obj, name, value):
    """setattr(obj, name, value) of an attribute obj has, and value held until any collection
    in progress has ended."""
    getattr(obj, name)  # (AttributeError: a new one would grow obj's table)
    setattr(obj, name, value)
    bytearray(1)  # waits for the collector's lock


def setitem_settled(container, key, value):
    """container[key] = value of a key or index container has, and value held until any
    collection in progress has ended."""
    container[key]  # (KeyError, IndexError: a new one would grow container's table)
    container[key] = value
    bytearray(1)

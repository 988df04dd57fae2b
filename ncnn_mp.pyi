# SPDX-License-Identifier: MIT
"""ncnn_mp: Tencent's ncnn neural-network inference framework for MicroPython.

Every class wraps one object of ncnn's C API (c_api.h). Objects that own an ncnn
handle free it exactly once, when collected or on close(); objects that depend
on another (an Extractor on its Net, a Mat on its buffer or allocator) keep it
alive. Errors raise TypeError, ValueError, IndexError, OSError, MemoryError or
NotImplementedError with a message of the form "Class.method: what was wrong" (on a
board built with terse errors, "Class.method" only). A board may leave out Mat's pixel
functions, camera formats and drawing, Python readers, counting allocators and Net.layers()/blobs()
(build_info()'s NCNN_MP_HAS_* say which it kept). Where ncnn has no pixel code (the boards),
from_pixels, from_pixels_resize and to_pixels are ncnn_mp's own (NCNN_MP_HAS_CAMERA) and the
roi and to_pixels_resize variants are absent.
"""

from typing import Any, Callable, Sequence, final, overload

from typing_extensions import Buffer, Self

def version() -> str:
    """ncnn's version string, e.g. '1.0.20261020' (ncnn_version)."""

def version_number() -> int:
    """ncnn's version as a number (ncnn_version_number)."""

def build_info() -> dict[str, bool]:
    """The compile-time switches of the ncnn in this firmware (NCNN_STRING, NCNN_STDIO, NCNN_PIXEL, ...),
    NCNN_MP_KERNELS: ncnn_mp's own Convolution, ConvolutionDepthWise and InnerProduct in its Nets, and the
    parts of ncnn_mp the board kept (NCNN_MP_HAS_PIXELS, _CAMERA, _DRAWING, _PYTHON_READERS, _COUNTING_ALLOCATOR,
    _GRAPH_INFO)."""

def live_custom_layers() -> int:
    """How many Python custom-layer instances ncnn holds now (leak checks)."""

CUSTOM_BIT: int
"""ncnn's LayerType::CustomBit (256): binary params (load_param_bin) give custom layer type n as CUSTOM_BIT | n."""

class Allocator:
    """A pool allocator for Mats and workspaces (ncnn_allocator_create_[unlocked_]pool_allocator),
    a counting one that measures what a net needs, or an arena of fixed size reserved up front."""

    in_use: int | None
    """Bytes handed out and not yet given back: a counting allocator's, an arena's blocks (None for a pool)."""
    peak: int | None
    """A counting allocator's most bytes in use at once; an arena's high-water mark, the arena an extract needs (None for a pool)."""
    size: int | None
    """An arena's size in bytes: its plan's and its spare part (None for the others)."""
    unplanned: int | None
    """An arena's blocks that did not follow its plan, since made or reset_peak() (None for the others)."""

    def __init__(self, unlocked: bool = False, *, counting: bool = False, arena: int | Buffer | None = None,
                 spare: int | None = None) -> None:
        """A pool allocator; unlocked=True skips locking (use from one thread only); counting=True:
        no pool, every block from ncnn's fastMalloc, in_use and peak counted; arena=size: every block
        from one block of size bytes taken from the C heap now, first fit (MemoryError when a block does
        not fit); arena=plan (from plan()): the blocks laid out as planned, spare bytes more for first fit."""
    def reset_peak(self) -> None:
        """Start the peak again from what is in use now (counting allocators and arenas); an arena's recording starts again."""
    def plan(self) -> bytes:
        """An arena's memory plan: the blocks it handed out since made or reset_peak(), laid out with no block alive at once overlapping; Allocator(arena=plan) replays it."""
    def close(self) -> None:
        """Drop this object's hold; ncnn's allocator is destroyed once nothing allocated from it is alive."""
    def __enter__(self) -> Self:
        """Use in a with block; close() at its end."""
    def __exit__(self, *exc: object) -> None:
        """close()."""

class Option:
    """ncnn's runtime options (ncnn_option_*): owned, a view of a Net's option, or lent to a
    callback (the forwards of one extract share one, valid until the extract returns)."""

    num_threads: int
    """Worker threads for layers that parallelise (1..64)."""
    use_vulkan_compute: bool
    """Run on the GPU through Vulkan (only where ncnn was built with it)."""
    use_local_pool_allocator: bool
    """Give each extractor pool allocators of its own when none is set."""
    use_winograd_convolution: bool
    """Allow Winograd convolution kernels."""
    use_sgemm_convolution: bool
    """Allow im2col + sgemm convolution kernels."""
    use_packing_layout: bool
    """Let layers pack channels (elempack 4/8/16) for SIMD."""
    use_fp16_packed: bool
    """Allow fp16 packed storage."""
    use_fp16_storage: bool
    """Store blobs as fp16 where supported."""
    use_fp16_arithmetic: bool
    """Compute in fp16 where supported."""
    use_int8_packed: bool
    """Allow int8 packed storage."""
    use_int8_storage: bool
    """Store blobs as int8 where supported."""
    use_int8_arithmetic: bool
    """Compute in int8 where supported."""
    use_int16_packed: bool
    """Allow int16 packed storage."""
    use_int16_storage: bool
    """Store blobs as int16 where supported."""
    use_bf16_packed: bool
    """Allow bf16 packed storage."""
    use_bf16_storage: bool
    """Store blobs as bf16 where supported."""
    use_shader_local_memory: bool
    """Vulkan: use shader local memory."""
    use_cooperative_matrix: bool
    """Vulkan: use cooperative matrix extensions."""

    def __init__(self) -> None:
        """Default options (ncnn_option_create)."""
    def set_blob_allocator(self, allocator: Allocator | None) -> None:
        """Allocator for blobs (None: ncnn's default)."""
    def set_workspace_allocator(self, allocator: Allocator | None) -> None:
        """Allocator for layer workspaces (None: ncnn's default)."""
    def set_kvcache_allocator(self, allocator: Allocator | None) -> None:
        """Allocator for attention key/value caches (None: ncnn's default)."""
    def set_kvcache_max_seqlen_hint(self, max_seqlen_hint: int) -> None:
        """Expected longest sequence, so kv caches are sized once."""

class Mat:
    """ncnn's n-dimensional blob (ncnn_mat_*); its storage is a buffer: memoryview(mat) is zero-copy.

    memoryview(mat) has typecode 'f' for float32 elements (else 'B') and spans the whole
    storage: a 3-D/4-D Mat's channels start every cstep elements, cstep being w*h*d
    rounded up to 16 bytes, so the padding between channels shows up in the view.
    A memoryview holds the data pointer, not the Mat (MicroPython's memoryview keeps no
    reference to a buffer outside its heap): keep the Mat named while its view is used;
    memoryview(ex.extract(...)) reads freed memory once the GC has collected the Mat.

    A Mat returned by a method keeps alive the Mats it was computed from and holds the
    allocator its data came from. One computed from a Mat ncnn lent a custom layer without
    copying (reshape, batch, flatten, convert_packing, a zero border, Mat(data=blob), a
    layer handing its bottom back) is lent too: it raises ValueError once the callback
    returned, or in another thread. A Mat whose buffer moved (a bytearray that grew under
    Mat(data=...), a Mat given new storage under a view) raises ValueError too.
    """

    @property
    def dims(self) -> int:
        """Number of dimensions: 0 (empty), 1, 2, 3 or 4."""
    @property
    def w(self) -> int:
        """Width."""
    @property
    def h(self) -> int:
        """Height."""
    @property
    def d(self) -> int:
        """Depth (4-D Mats)."""
    @property
    def c(self) -> int:
        """Channels."""
    @property
    def elemsize(self) -> int:
        """Bytes per element (times elempack)."""
    @property
    def elempack(self) -> int:
        """Elements packed together per position."""
    @property
    def cstep(self) -> int:
        """Elements from the start of one channel to the next."""
    @property
    def n(self) -> int:
        """Batch count (1 unless made with n=)."""
    @property
    def nstep(self) -> int:
        """Elements from the start of one batch to the next."""

    BORDER_CONSTANT: int
    """copy_make_border: fill the border with v."""
    BORDER_REPLICATE: int
    """copy_make_border: repeat the edge."""
    BORDER_REFLECT: int
    """copy_make_border: mirror the Mat at its edge."""
    PIXEL_RGB: int
    """Pixels in RGB order (3 bytes each)."""
    PIXEL_BGR: int
    """Pixels in BGR order (3 bytes each)."""
    PIXEL_GRAY: int
    """Pixels in GRAY order (1 bytes each)."""
    PIXEL_RGBA: int
    """Pixels in RGBA order (4 bytes each)."""
    PIXEL_BGRA: int
    """Pixels in BGRA order (4 bytes each)."""
    PIXEL_RGB2BGR: int
    """Pixels in RGB order, read into (or written from) a Mat as BGR."""
    PIXEL_RGB2GRAY: int
    """Pixels in RGB order, read into (or written from) a Mat as GRAY."""
    PIXEL_RGB2RGBA: int
    """Pixels in RGB order, read into (or written from) a Mat as RGBA."""
    PIXEL_RGB2BGRA: int
    """Pixels in RGB order, read into (or written from) a Mat as BGRA."""
    PIXEL_BGR2RGB: int
    """Pixels in BGR order, read into (or written from) a Mat as RGB."""
    PIXEL_BGR2GRAY: int
    """Pixels in BGR order, read into (or written from) a Mat as GRAY."""
    PIXEL_BGR2RGBA: int
    """Pixels in BGR order, read into (or written from) a Mat as RGBA."""
    PIXEL_BGR2BGRA: int
    """Pixels in BGR order, read into (or written from) a Mat as BGRA."""
    PIXEL_GRAY2RGB: int
    """Pixels in GRAY order, read into (or written from) a Mat as RGB."""
    PIXEL_GRAY2BGR: int
    """Pixels in GRAY order, read into (or written from) a Mat as BGR."""
    PIXEL_GRAY2RGBA: int
    """Pixels in GRAY order, read into (or written from) a Mat as RGBA."""
    PIXEL_GRAY2BGRA: int
    """Pixels in GRAY order, read into (or written from) a Mat as BGRA."""
    PIXEL_RGBA2RGB: int
    """Pixels in RGBA order, read into (or written from) a Mat as RGB."""
    PIXEL_RGBA2BGR: int
    """Pixels in RGBA order, read into (or written from) a Mat as BGR."""
    PIXEL_RGBA2GRAY: int
    """Pixels in RGBA order, read into (or written from) a Mat as GRAY."""
    PIXEL_RGBA2BGRA: int
    """Pixels in RGBA order, read into (or written from) a Mat as BGRA."""
    PIXEL_BGRA2RGB: int
    """Pixels in BGRA order, read into (or written from) a Mat as RGB."""
    PIXEL_BGRA2BGR: int
    """Pixels in BGRA order, read into (or written from) a Mat as BGR."""
    PIXEL_BGRA2GRAY: int
    """Pixels in BGRA order, read into (or written from) a Mat as GRAY."""
    PIXEL_BGRA2RGBA: int
    """Pixels in BGRA order, read into (or written from) a Mat as RGBA."""
    PIXEL_RGB565: int
    """Camera/screen frames: RGB565, 2 bytes a pixel, low byte first (framebuf.RGB565's order).
    The Mat's order goes in the high 16 bits, both ways: PIXEL_RGB565 | PIXEL_BGR << 16 (default RGB)."""
    PIXEL_RGB565_BE: int
    """RGB565 with the high byte first (SPI LCDs, most ESP32 camera drivers)."""
    PIXEL_YUYV: int
    """YUV 4:2:2, Y0 U Y1 V per pair of pixels (even w); BT.601 full range."""
    PIXEL_NV12: int
    """YUV 4:2:0: the Y plane, then h/2 rows of U V pairs (even w and h); BT.601 full range."""
    PIXEL_NV21: int
    """YUV 4:2:0 as NV12 with V U pairs (Android's camera default)."""

    def __init__(self, w: int = 0, h: int = 0, d: int = 0, c: int = 0, *, data: Buffer | None = None,
                 elemsize: int = 0, elempack: int = 0, allocator: Allocator | None = None, n: int = 1) -> None:
        """Mat(w), Mat(w, h), Mat(w, h, c), Mat(w, h, d, c) as in ncnn's C++; data= wraps a buffer
        without copying; n= makes a batch of n such Mats."""
    def batch(self, b: int) -> Mat:
        """A view of batch b (sharing storage; it keeps this Mat alive)."""
    def fill(self, v: float) -> None:
        """Set every element to v (float32 Mats)."""
    def clone(self, allocator: Allocator | None = None) -> Mat:
        """A deep copy."""
    def clone_from(self, other: Mat, allocator: Allocator | None = None) -> None:
        """Make this Mat a deep copy of other (CPython ncnn)."""
    def create(self, w: int, h: int = 0, d: int = 0, c: int = 0, *, elemsize: int = 4, elempack: int = 1,
               allocator: Allocator | None = None) -> None:
        """Give this Mat new, uninitialised storage of that shape (create(w, h, c) as in C++)."""
    def release(self) -> None:
        """Give the storage back now rather than when the Mat is collected: the Mat becomes
        empty (Mats computed from it keep storage they share). Not for a Mat lent to a callback."""
    def reshape(self, w: int, *args: int | Allocator | None) -> Mat:
        """reshape(w[, h[, c]][, allocator]) or reshape(w, h, d, c[, allocator]): same elements, new shape."""
    def flatten(self, opt: Option) -> Mat:
        """The elements as a 1-D Mat (ncnn_flatten)."""
    def convert_packing(self, elempack: int, opt: Option) -> Mat:
        """The same data with another elempack (ncnn_convert_packing)."""
    def to_bytes(self) -> bytes:
        """The elements, packed: channel padding left out."""
    def from_bytes(self, buf: Buffer) -> None:
        """Fill the elements from packed bytes (the layout to_bytes() gives)."""
    def substract_mean_normalize(self, mean: Sequence[float] | Buffer | None, norm: Sequence[float] | Buffer | None) -> None:
        """Per channel: (x - mean) * norm; either may be None (ncnn's spelling)."""
    def copy_make_border(self, top: int, bottom: int, left: int, right: int, type: int, v: float, opt: Option,
                         *, front: int = -1, behind: int = -1) -> Mat:
        """A copy with a border added (type: Mat.BORDER_*); front/behind pad the depth too."""
    def copy_cut_border(self, top: int, bottom: int, left: int, right: int, opt: Option,
                        *, front: int = -1, behind: int = -1) -> Mat:
        """A copy with the borders cut off."""
    @classmethod
    def from_pixels(cls, pixels: Buffer, type: int, w: int, h: int, stride: int = 0,
                    allocator: Allocator | None = None) -> Mat:
        """A (w, h, channels) float Mat from pixels or a camera frame (type: Mat.PIXEL_*; stride 0: packed rows)."""
    @classmethod
    def from_pixels_resize(cls, pixels: Buffer, type: int, w: int, h: int, target_w: int, target_h: int,
                           stride: int = 0, allocator: Allocator | None = None) -> Mat:
        """from_pixels, resized (bilinear) to target_w x target_h (camera formats: straight into the Mat, unrounded)."""
    @classmethod
    def from_pixels_int8(cls, pixels: Buffer, type: int, w: int, h: int, target_w: int, target_h: int, scale: float,
                         mean: Sequence[float] | Buffer | None = None, norm: Sequence[float] | Buffer | None = None,
                         stride: int = 0, allocator: Allocator | None = None) -> Mat:
        """A frame resized, normalized ((v - mean) * norm) and quantized with scale (Net.input_int8_scale) straight into an int8 Mat."""
    @classmethod
    def from_pixels_roi(cls, pixels: Buffer, type: int, w: int, h: int, roix: int, roiy: int, roiw: int,
                        roih: int, stride: int = 0, allocator: Allocator | None = None) -> Mat:
        """from_pixels of a region of interest."""
    @classmethod
    def from_pixels_roi_resize(cls, pixels: Buffer, type: int, w: int, h: int, roix: int, roiy: int, roiw: int,
                               roih: int, target_w: int, target_h: int, stride: int = 0,
                               allocator: Allocator | None = None) -> Mat:
        """from_pixels of a region of interest, resized to target_w x target_h."""
    def to_pixels(self, type: int, pixels: Buffer | None = None, stride: int = 0) -> Buffer:
        """8-bit pixels or a camera frame from this Mat, into pixels (returned) or a new bytearray."""
    def to_pixels_resize(self, type: int, target_w: int, target_h: int, pixels: Buffer | None = None,
                         stride: int = 0) -> Buffer:
        """to_pixels, resized to target_w x target_h."""
    @staticmethod
    def draw_rectangle(pixels: Buffer, w: int, h: int, channels: int, rx: int, ry: int, rw: int, rh: int,
                       color: int, thickness: int) -> None:
        """Draw on 8-bit pixels (color 0xAABBGGRR; thickness -1 fills); clipped to the image."""
    @staticmethod
    def draw_circle(pixels: Buffer, w: int, h: int, channels: int, cx: int, cy: int, radius: int, color: int,
                    thickness: int) -> None:
        """Draw a circle on 8-bit pixels; clipped to the image."""
    @staticmethod
    def draw_line(pixels: Buffer, w: int, h: int, channels: int, x0: int, y0: int, x1: int, y1: int,
                  color: int, thickness: int) -> None:
        """Draw a line on 8-bit pixels; clipped to the image."""
    @staticmethod
    def draw_text(pixels: Buffer, w: int, h: int, channels: int, text: str, x: int, y: int, fontpixelsize: int,
                  color: int) -> None:
        """Draw ASCII text on 8-bit pixels; clipped to the image."""
    def __getitem__(self, i: int) -> float:
        """The i-th float32 of the storage (CPython ncnn)."""
    def __setitem__(self, i: int, v: float) -> None:
        """Set the i-th float32 of the storage (CPython ncnn)."""
    def __len__(self) -> int:
        """Elements in the storage, channel padding included."""
    def __buffer__(self, flags: int, /) -> memoryview:
        """The storage, for memoryview() and array(); ValueError where the Mat may not be used."""

class DataReader:
    """Where ncnn reads params and weights: memory (bounds-checked), a file, zeros, or Python (ncnn_datareader_*).

    A subclass made with no source (super().__init__()) streams from anywhere through the
    read(n) it defines: return up to n bytes (bytes-like; fewer is fine, ncnn_mp asks
    again), b"" at the end of the data. ncnn_mp copies what it returns into ncnn's buffer
    and scans text params itself (reading a few hundred bytes ahead, which a later load
    through the same reader gets first). An exception read() raises, or a result too long
    or not bytes-like, fails the load with that exception; the Net can load again.
    """

    def __init__(self, *, from_memory: Buffer | None = None, from_stdio: str | Any = None,
                 zeros: bool = False) -> None:
        """One of: from_memory=buffer, from_stdio=path or open file, zeros=True; none in a subclass defining read(n)."""
    def close(self) -> None:
        """Release the reader (and close a file it opened); RuntimeError while a load reads through it."""
    def __enter__(self) -> Self:
        """Use in a with block; close() at its end."""
    def __exit__(self, *exc: object) -> None:
        """close()."""

class ParamDict:
    """A layer's parameters: id (0..31) -> int, float or array (ncnn_paramdict_*).

    A ParamDict handed to a custom layer's load_param is lent: read-only, and only
    valid during that call.
    """

    def __init__(self) -> None:
        """An empty ParamDict (ncnn_paramdict_create)."""
    def get_type(self, id: int) -> int:
        """0 unset, 1 int-or-float, 2 int, 3 float, 4/5/6 array (ncnn's type codes)."""
    def get_int(self, id: int, default: int = 0) -> int:
        """The int at id, or default."""
    def get_float(self, id: int, default: float = 0.0) -> float:
        """The float at id, or default."""
    def get_array(self, id: int, default: Mat | None = None) -> Mat | None:
        """The array at id as a Mat (sharing the ParamDict's storage), or default."""
    @overload
    def get(self, id: int, default: int) -> int:
        """Read id as an int (CPython ncnn)."""
    @overload
    def get(self, id: int, default: float) -> float:
        """Read id as a float (CPython ncnn)."""
    @overload
    def get(self, id: int, default: Mat | None = None) -> Mat | int | float | None:
        """Read id as an array; without default, as the type stored."""
    def set_int(self, id: int, v: int) -> None:
        """Store an int."""
    def set_float(self, id: int, v: float) -> None:
        """Store a float."""
    def set_array(self, id: int, v: Mat) -> None:
        """Store a copy of a Mat as an array."""
    def set(self, id: int, v: int | float | Mat) -> None:
        """Store by the value's type (CPython ncnn)."""

class ModelBin:
    """Where a layer's load_model reads weights (ncnn_modelbin_*).

    A ModelBin handed to a custom layer's load_model is lent: only valid during that call.
    """

    def __init__(self, *, from_datareader: DataReader | None = None,
                 from_mat_array: Sequence[Mat] | None = None) -> None:
        """Exactly one of: from_datareader=dr (kept alive), from_mat_array=[Mat, ...] (copied)."""
    def load(self, w: int, *args: int) -> Mat:
        """load(w, type), load(w, h, type) or load(w, h, c, type); type 0 tagged, 1 raw float32."""
    def close(self) -> None:
        """Release the ModelBin now."""

class Layer:
    """One ncnn layer on its own (ncnn_layer_*): Layer(type='ReLU'), Layer(typeindex=n).

    Subclass it (and call super().__init__()) to write a custom layer in Python.
    """

    one_blob_only: bool
    """The layer takes one bottom and gives one top."""
    support_inplace: bool
    """The layer can overwrite its input (forward_inplace)."""
    support_vulkan: bool
    """The layer has a Vulkan implementation."""
    support_packing: bool
    """The layer accepts packed (elempack > 1) blobs."""
    support_bf16_storage: bool
    """The layer accepts bf16 blobs."""
    support_fp16_storage: bool
    """The layer accepts fp16 blobs."""
    support_vulkan_packing: bool
    """Vulkan: the layer accepts packed blobs."""
    support_any_packing: bool
    """The layer accepts any elempack."""
    support_vulkan_any_packing: bool
    """Vulkan: the layer accepts any elempack."""
    @property
    def name(self) -> str:
        """The layer's name in its .param ('' on its own)."""
    @property
    def type(self) -> str:
        """The layer's type name, e.g. 'ReLU'."""
    @property
    def typeindex(self) -> int:
        """ncnn's index of the type."""
    @property
    def bottom_count(self) -> int:
        """Number of bottom (input) blobs in its Net."""
    @property
    def top_count(self) -> int:
        """Number of top (output) blobs in its Net."""
    @property
    def bottoms(self) -> list[int]:
        """Blob indexes of the bottoms in its Net."""
    @property
    def tops(self) -> list[int]:
        """Blob indexes of the tops in its Net."""

    def __init__(self, type: str | None = None, *, typeindex: int | None = None) -> None:
        """A built-in layer by type name or index; no argument: the base of a Python custom layer."""
    @staticmethod
    def type_to_index(type: str) -> int:
        """ncnn's index of a type name, -1 if none."""
    def load_param(self, pd: ParamDict) -> int | None:
        """Read the layer's parameters (a custom layer returns 0 or None for success)."""
    def load_model(self, mb: ModelBin) -> int | None:
        """Read the layer's weights, after load_param."""
    def create_pipeline(self, opt: Option) -> int | None:
        """Prepare kernels for opt (forward does it on first use)."""
    def destroy_pipeline(self, opt: Option) -> int | None:
        """Release what create_pipeline prepared."""
    def forward(self, bottom: Any, *args: Any) -> Any:
        """forward(mat, opt) -> Mat, or forward([mats], n_top, opt) -> tuple of Mats.

        A custom layer defines forward(self, bottom, top, opt) -> int filling top
        (CPython ncnn style), or forward(self, bottom, opt) returning the top Mat(s).
        """
    def forward_inplace(self, blobs: Any, opt: Option) -> int | None:
        """Run the layer overwriting its input(s)."""
    def get_bottom(self, i: int) -> int:
        """Blob index of the i-th bottom."""
    def get_top(self, i: int) -> int:
        """Blob index of the i-th top."""
    def get_bottom_shape(self, i: int) -> tuple[int, int, int, int]:
        """(dims, w, h, c) of the i-th bottom as the .param's shape hints say."""
    def get_top_shape(self, i: int) -> tuple[int, int, int, int]:
        """(dims, w, h, c) of the i-th top as the .param's shape hints say."""

@final
class Extractor:
    """One inference session on a Net (ncnn_extractor_*); made by Net.create_extractor()."""

    def set_option(self, opt: Option) -> None:
        """Run this session with opt (inputs given so far are kept)."""
    def input(self, blob: str | int, mat: Mat) -> None:
        """Feed mat to the blob named (or numbered) blob; the Extractor keeps mat alive."""
    def extract(self, blob: str | int, *, hook: Callable[[int, str | None, str | None, int], object] | None = None) -> Mat:
        """Run the net as far as blob and return it (ValueError naming the layer if an input does not fit the model);
        hook(index, name, type, count) is called before each layer the shape guard checks, and what it raises stops the extract."""
    def close(self) -> None:
        """Release the session now instead of when collected."""
    def __enter__(self) -> Self:
        """Use in a with block; close() at its end."""
    def __exit__(self, *exc: object) -> None:
        """close()."""

class Net:
    """A network: its structure (.param), its weights (.bin) and its option (ncnn_net_*)."""

    opt: Option
    """The net's own option (a view: changes apply to the net); assigning copies an Option in."""
    option: Option
    """Same as opt."""
    @property
    def input_count(self) -> int:
        """Number of input blobs."""
    @property
    def output_count(self) -> int:
        """Number of output blobs."""

    def __init__(self) -> None:
        """An empty net (ncnn_net_create)."""
    def load_param(self, src: str | DataReader | Buffer) -> None:
        """Load the structure: a .param path, a DataReader, or the param text in a buffer.
        ValueError if it hands an int8 blob to a layer that cannot read it (int8 between
        layers needs the kernels: docs/models.md "int8 between layers")."""
    def load_param_mem(self, text: str | Buffer) -> None:
        """Load the structure from param text held in memory (CPython ncnn)."""
    def load_param_bin(self, src: str | DataReader | Buffer) -> None:
        """Load a binary structure (.param.bin): path, DataReader or buffer."""
    def load_model(self, src: str | DataReader | Buffer, *, copy: bool = True) -> None:
        """Load the weights (.bin): path, DataReader or buffer (bounds-checked). copy=False:
        ncnn keeps fp32/int8/bias data where it lies in a read-only, 4-byte aligned buffer
        (bytes, a ROMFS file in flash), which the net keeps alive while its layers use it."""
    def layers(self) -> list[dict[str, Any]]:
        """Each layer in order (CPython ncnn's net.layers()): name, type (None without NCNN_STRING),
        typeindex, bottoms and tops (blob indexes)."""
    def blobs(self) -> list[dict[str, Any]]:
        """Each blob in order: name (None without NCNN_STRING), producer and consumer (layer
        indexes, -1 none), shape (the param's shape hint as a Mat's (w,), (w, h), (w, h, c) or
        (w, h, d, c), or None)."""
    def weights_info(self) -> dict[str, int | None]:
        """What the last load_model did with the .bin, in bytes: in_place, copied, converted
        (fp16/bf16/codebook to fp32), unused (past the last weight), ram (C heap the load
        left in use: copies, conversions, repacked kernels); None where unknown."""
    def input_int8_scale(self, blob: str | int) -> float | None:
        """The scale the int8 layers reading input blob quantize it with (an int8 input must be made with it); None where one reads float32."""
    def output_int8_scale(self, blob: str | int) -> float | None:
        """The scale of an int8 output (quantize_int8 --int8-outputs): its values are q / scale (signed bytes); None for a float32 output."""
    def stack_needed(self) -> int:
        """Bytes of C stack an extract of this net asks of its thread (128 per layer of the
        longest chain plus a kernel reserve): give a thread that runs it at least this much
        more than it uses itself (_thread.stack_size); extract raises RuntimeError with less."""
    def load_model_mem(self, data: Buffer) -> None:
        """Load the weights from a buffer (CPython ncnn)."""
    def clear(self) -> None:
        """Unload everything; Extractors made before stop working."""
    def close(self) -> None:
        """Release the net now (Extractors still alive hold it until they go)."""
    def __enter__(self) -> Self:
        """Use in a with block; close() at its end."""
    def __exit__(self, *exc: object) -> None:
        """close()."""
    def get_input_name(self, i: int) -> str:
        """Name of the i-th input blob."""
    def get_output_name(self, i: int) -> str:
        """Name of the i-th output blob."""
    def get_input_index(self, i: int) -> int:
        """Blob index of the i-th input."""
    def get_output_index(self, i: int) -> int:
        """Blob index of the i-th output."""
    def input_names(self) -> list[str]:
        """Names of all input blobs (CPython ncnn)."""
    def output_names(self) -> list[str]:
        """Names of all output blobs (CPython ncnn)."""
    def create_extractor(self) -> Extractor:
        """A new inference session (once load_model has succeeded); it keeps this Net alive."""
    def register_custom_layer(self, type: str | int, creator: Callable[[], Layer]) -> None:
        """Let ncnn create layers of `type` (a name, or a type index; a built-in one is replaced)
        by calling creator (a Layer subclass, or a callable returning a new instance)."""

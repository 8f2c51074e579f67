"""Gluon + inline-PTX tile ranking probe: match.any.sync per warp slot + shared-memory counters."""
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

# rank within warp: match peers in this slot; the lowest peer bumps the warp's counter for the digit
# (word index $1 = warp*256 + digit in the shared buffer at offset 0), and broadcasts the old value.
_RANK_ASM = gl.constexpr("""{
.reg .b32 pe, lt, bl, ct, ad, ol, ll, tt;
.reg .pred p;
match.any.sync.b32 pe, $1, -1;
mov.u32 lt, %lanemask_lt;
and.b32 bl, pe, lt;
popc.b32 bl, bl;
popc.b32 ct, pe;
setp.eq.u32 p, bl, 0;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
mov.u32 ol, 0;
@p atom.shared.add.u32 ol, [ad], ct;
neg.s32 tt, pe;
and.b32 tt, tt, pe;
bfind.u32 ll, tt;
shfl.sync.idx.b32 ol, ol, ll, 31, -1;
add.u32 $0, ol, bl;
}""")

_LDS_ASM = gl.constexpr("""{
.reg .b32 ad, tt;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
ld.shared.u32 $0, [ad];
}""")

_STS_ASM = gl.constexpr("""{
.reg .b32 ad, tt;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
st.shared.u32 [ad], $2;
mov.u32 $0, 0;
}""")


@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit
def gluon_pass_kernel(keys_ptr, out_ptr, off_ptr, shift, W: gl.constexpr, R: gl.constexpr,
                      MODE: gl.constexpr, SMEM_WORDS: gl.constexpr):
    TILE: gl.constexpr = W * R * 32
    L3: gl.constexpr = gl.BlockedLayout([1, R, 1], [1, 1, 32], [W, 1, 1], [2, 1, 0])
    LH: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [W, 1], [1, 0])
    LZ: gl.constexpr = gl.BlockedLayout([4], [32], [W], [0])
    LB: gl.constexpr = gl.BlockedLayout([R], [32], [W], [0])
    pid = gl.program_id(0)
    smem = gl.allocate_shared_memory(gl.int32, [SMEM_WORDS // 256, 256], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    smem.slice(0, W, 0).store(gl.zeros([W, 256], gl.int32, LH))

    w = gl.arange(0, W, layout=gl.SliceLayout(1, gl.SliceLayout(2, L3)))
    s = gl.arange(0, R, layout=gl.SliceLayout(0, gl.SliceLayout(2, L3)))
    l = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, L3)))
    w3 = gl.expand_dims(gl.expand_dims(w, 1), 2)
    offs = w3 * (32 * R) + gl.expand_dims(gl.expand_dims(s, 0), 2) * 32 + gl.expand_dims(gl.expand_dims(l, 0), 1)
    base = pid.to(gl.int64) * TILE
    k = gl.load(keys_ptr + base + offs)
    d = (k >> shift) & 255
    wd = w3 * 256 + d
    gl.thread_barrier()
    rank = gl.inline_asm_elementwise(_RANK_ASM, "=r,r", [wd], dtype=gl.int32, is_pure=False, pack=1)
    gl.thread_barrier()
    cnt = smem.slice(0, W, 0).load(LH)
    wexcl = gl.associative_scan(cnt, 0, _add) - cnt
    tot = gl.sum(cnt, 0)
    LD: gl.constexpr = gl.BlockedLayout([1], [32], [W], [0])
    totd = gl.convert_layout(tot, LD)
    texcl = gl.convert_layout(gl.associative_scan(totd, 0, _add) - totd, gl.SliceLayout(0, LH))
    dig = gl.arange(0, 256, layout=gl.SliceLayout(0, LH))
    toff = gl.load(off_ptr + pid.to(gl.int64) * 256 + dig)
    gl.thread_barrier()
    if MODE == 2:
        smem.slice(0, W, 0).store(wexcl + gl.expand_dims(texcl, 0))
        smem.slice(W, 1, 0).store(gl.expand_dims(toff - texcl, 0))
    else:
        smem.slice(0, W, 0).store(wexcl + gl.expand_dims(toff, 0))
    gl.thread_barrier()
    pos = gl.inline_asm_elementwise(_LDS_ASM, "=r,r", [wd], dtype=gl.int32, is_pure=False, pack=1) + rank
    if MODE == 2:
        gl.thread_barrier()
        XOFF: gl.constexpr = W * 256 + 256
        dummy = gl.inline_asm_elementwise(_STS_ASM, "=r,r,r", [pos + XOFF, k], dtype=gl.int32,
                                          is_pure=False, pack=1)
        gl.thread_barrier()
        i = gl.arange(0, TILE, layout=LB)
        k2 = gl.inline_asm_elementwise(_LDS_ASM, "=r,r", [i + XOFF + dummy.sum() * 0], dtype=gl.int32,
                                       is_pure=False, pack=1)
        d2 = (k2 >> shift) & 255
        adj = gl.inline_asm_elementwise(_LDS_ASM, "=r,r", [d2 + W * 256], dtype=gl.int32, is_pure=False, pack=1)
        gl.store(out_ptr + (adj + i).to(gl.int64), k2)
    elif MODE == 1:
        gl.store(out_ptr + pos.to(gl.int64), k)
    else:  # ranks only: coalesced write of the destination (cost of ranking without the scatter)
        gl.store(out_ptr + base + offs, pos)


_HIST_ASM = gl.constexpr("""{
.reg .b32 ad, tt;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
red.shared.add.u32 [ad], 1;
mov.u32 $0, 0;
}""")


@gluon.jit
def gluon_hist4_kernel(keys_ptr, hist_ptr, n_tiles, W: gl.constexpr, R: gl.constexpr, PLACES: gl.constexpr):
    """Histogram of every 8-bit digit place: per-warp shared counters bumped with red.shared.add."""
    TILE: gl.constexpr = W * R * 32
    LB: gl.constexpr = gl.BlockedLayout([R], [32], [W], [0])
    LH: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [W, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [PLACES * W, 256], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    for p in gl.static_range(PLACES):
        smem.slice(p * W, W, 0).store(gl.zeros([W, 256], gl.int32, LH))
    gl.thread_barrier()
    i = gl.arange(0, TILE, layout=LB)
    wid = i // (32 * R)
    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    acc = gl.zeros([TILE], gl.int32, LB)
    for t in range(pid, n_tiles, nprog):
        k = gl.load(keys_ptr + t.to(gl.int64) * TILE + i)
        for p in gl.static_range(PLACES):
            d = (k >> (8 * p)) & 255
            acc += gl.inline_asm_elementwise(_HIST_ASM, "=r,r", [(p * W + wid) * 256 + d], dtype=gl.int32,
                                             is_pure=False, pack=1)
    gl.thread_barrier()
    dig = gl.arange(0, 256, layout=gl.SliceLayout(0, LH))
    for p in gl.static_range(PLACES):
        c = gl.sum(smem.slice(p * W, W, 0).load(LH), 0) + gl.sum(acc, 0) * 0
        gl.atomic_add(hist_ptr + p * 256 + dig, c)

//! The CUDA C++ dialect of the C-family writer.
//!
//! The IR reaching this backend went through the GPU passes
//! (`check_host_device`, `gpu_reductions`, `gpu_grid`): kernels hold grid
//! indices, warp reductions, barriers and block-shared arrays; the host
//! function holds scalar code, launches and the device temporaries
//! (1-element arrays that carry values between kernels).
//!
//! The printed file is one self-contained translation unit that `nvcc -c`
//! builds: kernels are `extern "C" __global__` with `__launch_bounds__`, the
//! host function `static int32_t NAME(...)` takes device pointers and
//! scalars, allocates the temporaries with `cudaMalloc`, launches with
//! `<<<grid, block, shared>>>`, checks `cudaGetLastError()` after each
//! launch and returns non-zero on failure; the entry trampoline
//! `parpy_entry_NAME(void **args)` returns its status. The same includes,
//! prelude, helpers and kernels alone form the device translation unit
//! ([`EmitOutput::device_text`]) that the runtime compiles with NVRTC
//! (`__CUDACC_RTC__` selects the header-free prelude).

use super::c_writer::{self, Dialect, EntryParam, FnRole};
use super::EmitOutput;
use crate::back::error::EmitError;
use crate::error::CompileError;
use crate::ir::{AtomicOp, Axis, GpuIndex, LaunchInfo, MathFn, Program, ReduceOp, WARP_SIZE};
use crate::options::Options;
use crate::types::ElemTy;

pub struct CudaDialect {
    /// The program uses float16 (`cuda_fp16.h` is included).
    pub f16: bool,
    /// Some kernel's blocks form thread block clusters
    /// (`cooperative_groups.h` is included).
    pub clusters: bool,
}

/// Whether any variable or any value of the program is a float16 (math on
/// 8-bit integers and bools computes in float16 with no float16 variable).
fn uses_f16(p: &Program) -> bool {
    let fns = || {
        std::iter::once(&p.host)
            .chain(p.kernels.iter().map(|k| &k.func))
            .chain(p.helpers.iter())
    };
    if fns()
        .flat_map(|f| f.vars.iter())
        .any(|v| v.ty.elem() == Some(ElemTy::F16))
    {
        return true;
    }
    let mut found = false;
    for f in fns() {
        crate::ir::visit::walk_exprs(&f.body, &mut |e| {
            found |= e.ty.elem() == Some(ElemTy::F16);
            !found
        });
    }
    found
}

pub fn emit(p: &Program, options: &Options) -> Result<EmitOutput, CompileError> {
    let d = CudaDialect {
        f16: uses_f16(p),
        clusters: p.kernels.iter().any(|k| k.launch.cluster_dims().is_some()),
    };
    Ok(c_writer::write_parts(&d, p, options)?.into_output(true))
}

/// The CUDA C++ file of the wrappers of the `Target.Host` externals that
/// the host code of `p` calls (`used`, indices into `p.externals`), which
/// nvcc builds into a library for the Cuda runtime's launch plan:
/// `parpy_host_ext_K(void **a)` calls external `K` with `*(T *)a[i]` and
/// stores its result at `a[n]`. Scalar parameters only (the core refuses
/// arrays there).
pub fn host_externals_source(p: &Program, used: &[u32]) -> Result<String, String> {
    let mut headers = vec![];
    let mut fns = String::new();
    for &k in used {
        let Some(d) = p.externals.get(k as usize) else {
            return Err(format!("no external function {k}"));
        };
        if let Some(h) = &d.header {
            if !headers.contains(h) {
                headers.push(h.clone());
            }
        }
        let mut args = vec![];
        for (i, (pname, t)) in d.params.iter().enumerate() {
            let crate::signature::ExtParam::Scalar(e) = t else {
                return Err(format!(
                    "the host external function `{}` takes the array `{pname}`",
                    d.name
                ));
            };
            let ty = scalar_type(*e);
            args.push(format!("*({ty} *)a[{i}]"));
        }
        let call = format!("{}({})", d.name, args.join(", "));
        let body = match d.ret {
            Some(e) => format!("  *({} *)a[{}] = {call};\n", scalar_type(e), d.params.len()),
            None => format!("  {call};\n"),
        };
        fns.push_str(&format!(
            "extern \"C\" int32_t parpy_host_ext_{k}(void **a) {{\n{body}  return 0;\n}}\n\n"
        ));
    }
    let mut out = String::from(
        "// The host external functions of a Cuda program, called by parpy's launch plan.\n\
         #include <stdint.h>\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n",
    );
    for h in headers {
        out.push_str(&format!("#include {h}\n"));
    }
    out.push('\n');
    out.push_str(&fns);
    Ok(out)
}

/// The CUDA C++ type of an element type (float16: `__half`).
fn scalar_type(e: ElemTy) -> &'static str {
    c_writer::stdint_type(e).unwrap_or("__half")
}

fn axis(a: Axis) -> &'static str {
    a.name()
}

/// Lines that free the temporaries and return `code`.
fn fail(cleanup: &[String], code: i32) -> Vec<String> {
    let mut v: Vec<String> = cleanup.iter().map(|l| format!("  {l}")).collect();
    v.push(format!("  return {code};"));
    v
}

fn checked(call: &str, cleanup: &[String], code: i32) -> Vec<String> {
    let mut v = vec![format!("if ({call} != cudaSuccess) {{")];
    v.extend(fail(cleanup, code));
    v.push("}".into());
    v
}

impl Dialect for CudaDialect {
    fn target_name(&self) -> &'static str {
        "CUDA C++"
    }

    /// With clusters, `cooperative_groups.h` comes first: under NVRTC it
    /// brings CCCL's `<cstdint>`, whose integer macros then stand (ours
    /// are defined only where it has none).
    fn includes(&self) -> String {
        let mut s = String::new();
        if self.clusters {
            s.push_str("#include <cooperative_groups.h>\n");
        }
        s.push_str(
            "#ifdef __CUDACC_RTC__\n\
             typedef signed char int8_t;\n\
             typedef short int16_t;\n\
             typedef int int32_t;\n\
             typedef long long int64_t;\n\
             typedef unsigned char uint8_t;\n\
             typedef unsigned short uint16_t;\n\
             typedef unsigned int uint32_t;\n\
             typedef unsigned long long uint64_t;\n",
        );
        for (name, def) in [
            ("INT64_C", "INT64_C(v) v##LL"),
            ("UINT64_C", "UINT64_C(v) v##ULL"),
            ("INT32_MIN", "INT32_MIN (-2147483647 - 1)"),
            ("INT64_MIN", "INT64_MIN (-9223372036854775807LL - 1)"),
        ] {
            if self.clusters {
                s.push_str(&format!("#ifndef {name}\n#define {def}\n#endif\n"));
            } else {
                s.push_str(&format!("#define {def}\n"));
            }
        }
        s.push_str(
            "#define INFINITY __int_as_float(0x7f800000)\n\
             #define NAN __int_as_float(0x7fffffff)\n\
             #else\n\
             #include <stdint.h>\n\
             #include <math.h>\n\
             #include <cuda_runtime.h>\n\
             #endif\n",
        );
        if self.f16 {
            s.push_str("#include <cuda_fp16.h>\n");
        }
        s
    }

    fn scalar_type(&self, e: ElemTy) -> Result<&'static str, EmitError> {
        Ok(scalar_type(e))
    }

    fn math_name(&self, f: MathFn, e: ElemTy) -> Result<String, EmitError> {
        if e == ElemTy::F16 && !f.is_predicate() {
            // computed in float (the argument converts implicitly) and
            // rounded once, as NumPy does for float16 and as the C backend does
            if let Some(n) = c_writer::libm_name(f, ElemTy::F32) {
                return Ok(format!("(__half){n}"));
            }
        }
        c_writer::libm_name(f, e).ok_or_else(|| {
            EmitError::Unsupported(format!(
                "`{}` on {} is not supported by the CUDA backend yet",
                f.name(),
                e.short_name()
            ))
        })
    }

    fn local_array_limit(&self) -> Option<(i64, &'static str)> {
        // CUDA's local memory per thread (every compute capability since
        // 2.0); NVRTC compiles a larger array, and the launch fails
        Some((512 * 1024, "the local memory of a CUDA thread"))
    }

    fn prelude_qualifier(&self) -> &'static str {
        "static __host__ __device__ inline"
    }

    fn signed_overflow_wraps(&self) -> bool {
        false
    }

    fn defers_loop_checks(&self, role: FnRole) -> bool {
        role == FnRole::Kernel
    }
    fn cold_qualifier(&self) -> &'static str {
        "static __host__ __device__ __noinline__"
    }

    /// `atomicAdd`, `atomicMax`, `atomicMin` on the 32- and 64-bit types
    /// (64-bit integers through their unsigned / `long long` overloads);
    /// float `max`/`min` as an `atomicCAS` loop on the bits.
    fn atomic_update(
        &self,
        op: AtomicOp,
        e: ElemTy,
        ty: &str,
        place: &str,
        v: &str,
    ) -> Result<String, EmitError> {
        use ElemTy::*;
        let f = match op {
            AtomicOp::Add => "atomicAdd",
            AtomicOp::Max => "atomicMax",
            AtomicOp::Min => "atomicMin",
        };
        let int_ty = match (op, e) {
            (_, I32) => Some("int"),
            (_, U32) => Some("unsigned int"),
            (AtomicOp::Add, I64 | U64) | (_, U64) => Some("unsigned long long"),
            (_, I64) => Some("long long"),
            (AtomicOp::Add, F32 | F64) => {
                return Ok(format!("{f}(&{place}, {v});"));
            }
            _ => None,
        };
        if let Some(t) = int_ty {
            return Ok(format!("{f}(({t} *)&{place}, ({t})({v}));"));
        }
        let (bits, to_bits, from_bits) = match e {
            F32 => ("unsigned int", "__float_as_uint", "__uint_as_float"),
            F64 => (
                "unsigned long long",
                "(unsigned long long)__double_as_longlong",
                "__longlong_as_double",
            ),
            _ => {
                return Err(c_writer::atomic_unsupported(op, e, "CUDA"));
            }
        };
        let from = if e == F64 {
            format!("{from_bits}((long long)parpy_seen)")
        } else {
            format!("{from_bits}(parpy_seen)")
        };
        let new = c_writer::atomic_combine(op, e, ty, "parpy_a", "parpy_v");
        Ok(format!(
            "{{\n  {bits} *parpy_p = ({bits} *)&{place};\n  {ty} parpy_v = {v};\n  {bits} parpy_seen;\n  {bits} parpy_old = *parpy_p;\n  do {{\n    parpy_seen = parpy_old;\n    {ty} parpy_a = {from};\n    parpy_old = atomicCAS(parpy_p, parpy_seen, {to_bits}({new}));\n  }} while (parpy_old != parpy_seen);\n}}"
        ))
    }

    /// On the device an atomic; in host code (a check in front of a loop
    /// nest, nvcc builds) `rec` is a device pointer: a copy.
    fn bounds_record(&self, rest: &[String]) -> String {
        let writes = super::c_writer::record_writes(rest);
        format!(
            "#ifdef __CUDA_ARCH__\n  if (atomicCAS((unsigned long long *)rec, 0ull, (unsigned long long)(site + 1)) == 0ull) {{\n{writes}  }}\n#else\n  int64_t v[{}] = {{site + 1, {}}};\n  cudaMemcpy(rec, v, sizeof v, cudaMemcpyHostToDevice);\n#endif\n",
            rest.len() + 1,
            rest.join(", ")
        )
    }

    fn f64_bits(&self) -> &'static str {
        "#ifdef __CUDA_ARCH__\n  return __double_as_longlong(x);\n#else\n  int64_t i;\n  memcpy(&i, &x, sizeof i);\n  return i;\n#endif\n"
    }

    fn signature(
        &self,
        role: FnRole,
        ret: &str,
        name: &str,
        params: &[String],
        launch: Option<&LaunchInfo>,
    ) -> String {
        let params = params.join(", ");
        match role {
            // private: only the entry is exported from an nvcc build
            FnRole::Host => format!("static int32_t {name}({params})"),
            FnRole::Kernel => {
                let t: i64 = launch.map(|l| l.threads.iter().product()).unwrap_or(1);
                // a cluster size fixed at compile time: plain launches
                // (`<<<>>>`, cuLaunchKernel) form the clusters
                let cluster = match launch.and_then(LaunchInfo::cluster_dims) {
                    Some([x, y, z]) => format!("__cluster_dims__({x}, {y}, {z}) "),
                    None => String::new(),
                };
                format!(
                    "extern \"C\" __global__ void {cluster}__launch_bounds__({}) {name}({params})",
                    t.max(1)
                )
            }
            FnRole::Helper => format!("static __host__ __device__ {ret} {name}({params})"),
        }
    }

    fn launch(&self, kernel: &str, args: &[String], launch: &LaunchInfo) -> String {
        self.launch_checked(kernel, args, launch, 0, &[])
    }

    fn launch_checked(
        &self,
        kernel: &str,
        args: &[String],
        launch: &LaunchInfo,
        shared_bytes: i64,
        cleanup: &[String],
    ) -> String {
        let [bx, by, bz] = launch.blocks;
        let [tx, ty, tz] = launch.threads;
        // Block-shared arrays are static (`__shared__` in the kernel): no
        // dynamic shared memory is passed.
        let _ = shared_bytes;
        let mut lines = vec![format!(
            "{kernel}<<<dim3({bx}, {by}, {bz}), dim3({tx}, {ty}, {tz})>>>({});",
            args.join(", ")
        )];
        lines.extend(checked("cudaGetLastError()", cleanup, 1));
        lines.join("\n")
    }

    fn entry(&self, symbol: &str, host: &str, params: &[EntryParam]) -> String {
        let (args, unused) = c_writer::entry_call_args(params);
        format!(
            "extern \"C\" int32_t {symbol}(void **args) {{\n{unused}  return {host}({args});\n}}\n"
        )
    }

    fn gpu_index(&self, g: GpuIndex) -> Result<String, EmitError> {
        Ok(match g {
            GpuIndex::Thread(a) => format!("(int64_t)threadIdx.{}", axis(a)),
            GpuIndex::Block(a) => format!("(int64_t)blockIdx.{}", axis(a)),
            GpuIndex::BlockDim(a) => format!("(int64_t)blockDim.{}", axis(a)),
            GpuIndex::GridDim(a) => format!("(int64_t)gridDim.{}", axis(a)),
            GpuIndex::Lane => format!("(int64_t)(threadIdx.x % {WARP_SIZE})"),
            GpuIndex::Warp => format!("(int64_t)(threadIdx.x / {WARP_SIZE})"),
        })
    }

    fn barrier(&self) -> Result<String, EmitError> {
        Ok("__syncthreads();".into())
    }

    fn warp_reduce(&self, op: ReduceOp, e: ElemTy, arg: &str) -> Result<String, EmitError> {
        Ok(format!("{}({arg})", c_writer::warp_helper_name(op, e)))
    }

    fn warp_reduce_helper(&self, op: ReduceOp, e: ElemTy) -> Result<Option<String>, EmitError> {
        let ty = self.scalar_type(e)?;
        let wrap = c_writer::wrapping_twin(self, e)
            .map(|u| self.scalar_type(u))
            .transpose()?;
        // Types without a `__shfl_xor_sync` overload travel as `int`.
        let via_int = matches!(
            e,
            ElemTy::Bool | ElemTy::I8 | ElemTy::I16 | ElemTy::U8 | ElemTy::U16
        );
        let shfl = if via_int {
            format!("({ty})__shfl_xor_sync(0xffffffffu, (int)v, k)")
        } else {
            "__shfl_xor_sync(0xffffffffu, v, k)".to_string()
        };
        Ok(Some(c_writer::butterfly_helper(
            "static __device__ inline",
            ty,
            op,
            e,
            "int",
            &shfl,
            wrap,
        )))
    }

    fn cluster_reduce(&self, op: ReduceOp, e: ElemTy, arg: &str) -> Result<String, EmitError> {
        Ok(format!(
            "parpy_cluster_{}_{}({arg})",
            op.name(),
            e.short_name()
        ))
    }

    /// Thread 0 of each block puts the block's value
    /// (every thread holds it) into a shared slot; after a cluster barrier
    /// every thread reads the slots of all blocks through distributed
    /// shared memory, in rank order; a second barrier keeps every block's
    /// slot alive until all have read it.
    fn cluster_reduce_helper(&self, op: ReduceOp, e: ElemTy) -> Result<Option<String>, EmitError> {
        let ty = self.scalar_type(e)?;
        let (name, short) = (op.name(), e.short_name());
        let twin = c_writer::wrapping_twin(self, e)
            .map(|u| self.scalar_type(u))
            .transpose()?;
        let combine = c_writer::combine_stmt(op, e, twin.map(|u| (ty, u)));
        Ok(Some(format!(
            "static __device__ inline {ty} parpy_cluster_{name}_{short}({ty} v) {{\n  __shared__ {ty} parpy_slot;\n  cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();\n  if (threadIdx.x == 0) {{\n    parpy_slot = v;\n  }}\n  cl.sync();\n  v = *cl.map_shared_rank(&parpy_slot, 0);\n  for (unsigned int b = 1; b < cl.num_blocks(); b++) {{\n    {ty} o = *cl.map_shared_rank(&parpy_slot, b);\n    {combine}\n  }}\n  cl.sync();\n  return v;\n}}\n"
        )))
    }

    fn shared_decl(&self, ty: &str, name: &str, len: i64) -> Result<String, EmitError> {
        Ok(format!("__shared__ {ty} {name}[{len}];"))
    }

    fn device_temps(&self) -> bool {
        true
    }

    fn host_alloc(&self, ty: &str, name: &str, len: i64, cleanup: &[String]) -> Vec<String> {
        let mut v = vec![format!("{ty} *{name} = NULL;")];
        v.extend(checked(
            &format!("cudaMalloc((void **)&{name}, {len} * sizeof({ty}))"),
            cleanup,
            2,
        ));
        v
    }

    fn host_free(&self, name: &str) -> Vec<String> {
        vec![format!("cudaFree({name});")]
    }

    fn host_store(
        &self,
        ty: &str,
        temp: &str,
        at: &str,
        value: &str,
        cleanup: &[String],
    ) -> Vec<String> {
        let mut v = vec!["{".to_string(), format!("  {ty} parpy_v = {value};")];
        for l in checked(
            &format!("cudaMemcpy({temp} + {at}, &parpy_v, sizeof({ty}), cudaMemcpyHostToDevice)"),
            cleanup,
            3,
        ) {
            v.push(format!("  {l}"));
        }
        v.push("}".into());
        v
    }

    fn host_load(
        &self,
        ty: &str,
        dst: &str,
        temp: &str,
        at: &str,
        cleanup: &[String],
    ) -> Vec<String> {
        checked(
            &format!("cudaMemcpy(&{dst}, {temp} + {at}, sizeof({ty}), cudaMemcpyDeviceToHost)"),
            cleanup,
            3,
        )
    }

    fn host_end(&self, cleanup: &[String]) -> Vec<String> {
        let mut v = cleanup.to_vec();
        v.push("return 0;".into());
        v
    }

    fn callback_decl(&self) -> String {
        // host code: after the device unit (NVRTC never sees it)
        "extern \"C\" int32_t (*parpy_callback)(int64_t site, void **args);\n\
         int32_t (*parpy_callback)(int64_t site, void **args) = 0;\n"
            .into()
    }

    /// The device finishes its work first; the callback gets device
    /// pointers (the jit runtime runs callbacks through its launch plan,
    /// with host copies, instead of this host code).
    fn callback_call(&self, site: usize, argv: &str, cleanup: &[String]) -> Vec<String> {
        let mut v = checked("cudaDeviceSynchronize()", cleanup, 1);
        v.push(format!(
            "if (parpy_callback == 0 || parpy_callback({site}, {argv}) != 0) {{"
        ));
        v.extend(fail(cleanup, 4));
        v.push("}".into());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_helpers_by_type() {
        let d = CudaDialect {
            f16: false,
            clusters: false,
        };
        let f = d
            .warp_reduce_helper(ReduceOp::Sum, ElemTy::F32)
            .unwrap()
            .unwrap();
        assert_eq!(
            f,
            "static __device__ inline float parpy_warp_sum_f32(float v) {\n  for (int k = 16; k > 0; k /= 2) {\n    float o = __shfl_xor_sync(0xffffffffu, v, k);\n    v = v + o;\n  }\n  return v;\n}\n"
        );
        // Small ints travel through `int`.
        let f = d
            .warp_reduce_helper(ReduceOp::Max, ElemTy::I8)
            .unwrap()
            .unwrap();
        assert!(
            f.contains("int8_t o = (int8_t)__shfl_xor_sync(0xffffffffu, (int)v, k);"),
            "{f}"
        );
        assert!(f.contains("v = v > o ? v : o;"), "{f}");
        // floats: a NaN wins, as in NumPy's maximum
        let f = d
            .warp_reduce_helper(ReduceOp::Max, ElemTy::F32)
            .unwrap()
            .unwrap();
        assert!(f.contains("v = (v > o || v != v) ? v : o;"), "{f}");
        assert_eq!(
            d.warp_reduce(ReduceOp::Min, ElemTy::F64, "x").unwrap(),
            "parpy_warp_min_f64(x)"
        );
    }

    #[test]
    fn f16_includes_cuda_fp16_only_when_used() {
        assert!(!CudaDialect {
            f16: false,
            clusters: false
        }
        .includes()
        .contains("cuda_fp16.h"));
        assert!(CudaDialect {
            f16: true,
            clusters: false
        }
        .includes()
        .contains("#include <cuda_fp16.h>"));
        assert_eq!(
            CudaDialect {
                f16: true,
                clusters: false
            }
            .scalar_type(ElemTy::F16),
            Ok("__half")
        );
    }

    #[test]
    fn device_temporaries_are_freed_on_every_exit() {
        let d = CudaDialect {
            f16: false,
            clusters: false,
        };
        let cleanup = vec!["cudaFree(a);".to_string()];
        assert_eq!(
            d.host_alloc("float", "b", 1, &cleanup).join("\n"),
            "float *b = NULL;\nif (cudaMalloc((void **)&b, 1 * sizeof(float)) != cudaSuccess) {\n  cudaFree(a);\n  return 2;\n}"
        );
        assert_eq!(
            d.host_load("float", "s", "a", "0", &cleanup).join("\n"),
            "if (cudaMemcpy(&s, a + 0, sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {\n  cudaFree(a);\n  return 3;\n}"
        );
        let launch = LaunchInfo {
            levels: vec![64],
            tpb: 1024,
            blocks: [2, 3, 1],
            threads: [64, 1, 1],
            ..LaunchInfo::default()
        };
        assert_eq!(
            d.launch_checked("k", &["x".into(), "a".into()], &launch, 0, &cleanup),
            "k<<<dim3(2, 3, 1), dim3(64, 1, 1)>>>(x, a);\nif (cudaGetLastError() != cudaSuccess) {\n  cudaFree(a);\n  return 1;\n}"
        );
        assert_eq!(d.host_end(&cleanup), vec!["cudaFree(a);", "return 0;"]);
    }

    #[test]
    fn grid_indices_are_int64() {
        let d = CudaDialect {
            f16: false,
            clusters: false,
        };
        assert_eq!(
            d.gpu_index(GpuIndex::Block(Axis::Y)).unwrap(),
            "(int64_t)blockIdx.y"
        );
        assert_eq!(
            d.gpu_index(GpuIndex::Lane).unwrap(),
            "(int64_t)(threadIdx.x % 32)"
        );
    }
}

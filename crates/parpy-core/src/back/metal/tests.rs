use std::path::PathBuf;

use super::*;
use crate::diag::render_all;
use crate::ir::{
    Axis, BinOp, Expr, ExprKind, Kernel, KernelId, LaunchInfo, ReduceOp, Stmt, StmtKind, Type, Var,
    VarKind,
};
use crate::options::Options;
use crate::passes::testutil::*;
use crate::types::ElemTy;

fn gpu(g: GpuIndex) -> Expr {
    Expr::new(ExprKind::GpuIndex(g), Type::Scalar(ElemTy::I64), sp())
}

fn convert(e: Expr, to: ElemTy) -> Expr {
    Expr::new(
        ExprKind::Convert { arg: Box::new(e) },
        Type::Scalar(to),
        sp(),
    )
}

fn if_then(cond: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::new(
        StmtKind::If {
            cond,
            then_body: body,
            else_body: vec![],
        },
        sp(),
    )
}

/// A hand-lowered row sum with a run-time scalar factor `k`: one block per
/// row, a strided per-thread loop, a SIMD-group reduction, partials in
/// threadgroup memory, a barrier, and thread 0 storing the row's total.
fn row_sum_program(elem: ElemTy, scalar: ElemTy) -> Program {
    let mut h = FnBuilder::new("row_sum");
    let x = h.array("x", elem, &[64, 256]);
    let y = h.array("y", elem, &[64]);
    let k = h.scalar("k", scalar, None);

    let mut kb = FnBuilder::new("row_sum_rows");
    let kx = kb.array("x", elem, &[64, 256]);
    let ky = kb.array("y", elem, &[64]);
    let kk = kb.scalar("k", scalar, None);
    let acc = kb.local("acc", elem);
    let j = kb.index_var("j");
    let partial = kb.f.add_var(Var {
        name: "partial".into(),
        ty: Type::Array {
            elem,
            shape: vec![8],
        },
        kind: VarKind::Shared,
        value: None,
        span: sp(),
    });
    let f = &kb.f;
    let mut strided = for_loop(
        j,
        0,
        256,
        &[],
        vec![assign(
            acc,
            bin(
                BinOp::Add,
                var_e(f, acc),
                bin(
                    BinOp::Mul,
                    idx(f, kx, vec![gpu(GpuIndex::Block(Axis::X)), var_e(f, j)]),
                    convert(var_e(f, kk), elem),
                ),
            ),
        )],
    );
    strided.lo = gpu(GpuIndex::Thread(Axis::X));
    strided.step = 256;
    let warp_sum = Expr::new(
        ExprKind::WarpReduce {
            op: ReduceOp::Sum,
            arg: Box::new(var_e(f, acc)),
        },
        Type::Scalar(elem),
        sp(),
    );
    let body = vec![
        assign(acc, float(0.0, elem)),
        for_stmt(strided),
        assign(acc, warp_sum),
        if_then(
            bin(BinOp::Eq, gpu(GpuIndex::Lane), int(0)),
            vec![store(partial, vec![gpu(GpuIndex::Warp)], var_e(f, acc))],
        ),
        Stmt::new(StmtKind::Barrier, sp()),
        if_then(
            bin(BinOp::Eq, gpu(GpuIndex::Thread(Axis::X)), int(0)),
            vec![store(
                ky,
                vec![gpu(GpuIndex::Block(Axis::X))],
                idx(f, partial, vec![int(0)]),
            )],
        ),
    ];
    kb.f.body = body;
    h.push(Stmt::new(
        StmtKind::Launch {
            kernel: KernelId(0),
            args: vec![x, y, k],
        },
        sp(),
    ));
    let mut p = program(h.f);
    p.kernels.push(Kernel {
        func: kb.f,
        launch: LaunchInfo {
            levels: vec![64, 256],
            tpb: 256,
            blocks: [64, 1, 1],
            threads: [256, 1, 1],
            ..LaunchInfo::default()
        },
    });
    p
}

fn metal_options() -> Options {
    Options {
        backend: crate::options::Backend::Metal,
        ..Options::default()
    }
}

fn emit_ok(p: &Program) -> String {
    match emit(p, &metal_options()) {
        Ok(out) => out.text,
        Err(CompileError::User(d)) => panic!("{}", render_all(&d)),
        Err(CompileError::Internal(m)) => panic!("{m}"),
    }
}

fn emit_err(p: &Program, o: &Options) -> String {
    match emit(p, o) {
        Ok(out) => panic!("expected an error, got:\n{}", out.text),
        Err(CompileError::User(d)) => render_all(&d),
        Err(CompileError::Internal(m)) => panic!("internal: {m}"),
    }
}

fn stub_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/metal_stub")
}

/// Runs the clang syntax check of a Metal file against the stub header
/// with Debian's `clang-19` (or `$PARPY_CLANG`); `None` when it is not
/// installed (outside CI).
fn clang(name: &str, text: &str) -> Option<Result<(), String>> {
    let scratch = crate::passes::testutil::Scratch::new("metal-unit");
    let dir = &scratch.0;
    let src = dir.join(format!("{name}.metal"));
    std::fs::write(&src, text).ok()?;
    let stub = stub_dir();
    let cc = std::env::var("PARPY_CLANG").unwrap_or_else(|_| "clang-19".into());
    let out = std::process::Command::new(&cc)
        .args(["-x", "c++", "-std=c++17", "-fsyntax-only"])
        .args(["-Wall", "-Wextra", "-Wno-unknown-attributes", "-Werror"])
        .arg("-I")
        .arg(&stub)
        .arg("-include")
        .arg(stub.join("metal_stub.h"))
        .arg(&src)
        .output();
    if let Ok(o) = out {
        return Some(if o.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        });
    }
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!("CI=true but `{cc}` cannot run: the Metal syntax check needs clang-19");
    }
    eprintln!("note: `{cc}` not found; the Metal syntax check of {name} was skipped");
    None
}

#[test]
fn scalar_types_are_metal_names() {
    let d = MetalDialect;
    assert_eq!(d.scalar_type(ElemTy::I32), Ok("int32_t"));
    assert_eq!(d.scalar_type(ElemTy::I64), Ok("int64_t"));
    assert_eq!(d.scalar_type(ElemTy::U32), Ok("uint32_t"));
    assert_eq!(d.scalar_type(ElemTy::I8), Ok("int8_t"));
    assert_eq!(d.scalar_type(ElemTy::F32), Ok("float"));
    assert_eq!(d.scalar_type(ElemTy::F16), Ok("half"));
    assert_eq!(
        d.math_name(MathFn::Exp, ElemTy::F32).as_deref(),
        Ok("metal::exp")
    );
    assert!(d.math_name(MathFn::Exp, ElemTy::I32).is_err());
    // float max and min shuffle with NumPy's NaN rule; ints use simd_max
    assert_eq!(
        d.warp_reduce(ReduceOp::Max, ElemTy::F32, "v").as_deref(),
        Ok("parpy_warp_max_f32(v)")
    );
    assert_eq!(
        d.warp_reduce(ReduceOp::Max, ElemTy::I32, "v").as_deref(),
        Ok("simd_max(v)")
    );
    let h = d
        .warp_reduce_helper(ReduceOp::Min, ElemTy::F32)
        .unwrap()
        .unwrap();
    assert!(
        h.contains("simd_shuffle_xor(v, k)") && h.contains("(v < o || v != v) ? v : o"),
        "{h}"
    );
    assert_eq!(
        d.warp_reduce(ReduceOp::Sum, ElemTy::I64, "v").as_deref(),
        Ok("parpy_warp_sum_i64(v)")
    );
    assert!(d.warp_reduce(ReduceOp::Sum, ElemTy::F64, "v").is_err());
    assert_eq!(
        d.gpu_index(GpuIndex::Block(Axis::Y)).as_deref(),
        Ok("(int64_t)parpy_block.y")
    );
    assert_eq!(
        d.gpu_index_as(GpuIndex::Thread(Axis::X), ElemTy::I32),
        Ok(Some("(int32_t)parpy_thread.x".to_string()))
    );
    assert_eq!(
        d.gpu_index_as(GpuIndex::Lane, ElemTy::I32),
        Ok(Some("(int32_t)parpy_lane".to_string()))
    );
    assert_eq!(d.gpu_index_as(GpuIndex::Lane, ElemTy::F32), Ok(None));
}

#[test]
fn integer_literals_need_no_c_macros() {
    let d = MetalDialect;
    assert_eq!(d.int_literal(5, ElemTy::I32), "5");
    assert_eq!(d.int_literal(-7, ElemTy::I64), "-7");
    assert_eq!(
        d.int_literal(i32::MIN as i64, ElemTy::I32),
        "(-2147483647 - 1)"
    );
    assert_eq!(d.int_literal(5_000_000_000, ElemTy::I64), "5000000000L");
    assert_eq!(
        d.int_literal(i64::MIN, ElemTy::I64),
        "(-9223372036854775807L - 1)"
    );
    assert_eq!(d.int_literal(7, ElemTy::U32), "7u");
    assert_eq!(d.int_literal(7, ElemTy::U64), "7UL");
}

#[test]
fn kernel_signature_binds_buffers_then_params_then_grid() {
    let text = emit_ok(&row_sum_program(ElemTy::F32, ElemTy::I32));
    let expected_sig = "\
struct parpy_params_row_sum_rows {
  int32_t k;
};
static_assert(sizeof(parpy_params_row_sum_rows) == 4, \"the host packs 4 bytes\");

[[kernel]] void row_sum_rows(
    const device float *x [[buffer(0)]],
    device float *y [[buffer(1)]],
    constant parpy_params_row_sum_rows &parpy_params [[buffer(2)]],
    uint3 parpy_block [[threadgroup_position_in_grid]],
    uint3 parpy_thread [[thread_position_in_threadgroup]],
    uint parpy_lane [[thread_index_in_simdgroup]],
    uint parpy_simd_group [[simdgroup_index_in_threadgroup]]) {
  int32_t k = parpy_params.k;
  threadgroup float partial[8];
";
    assert!(text.contains(expected_sig), "{text}");
    for piece in [
        "acc = simd_sum(acc);",
        "threadgroup_barrier(mem_flags::mem_threadgroup);",
        "partial[(int64_t)parpy_simd_group] = acc;",
        "for (int64_t j = (int64_t)parpy_thread.x; j < 256; j += 256) {",
        "x[(int64_t)parpy_block.x * 256 + j] * (float)k",
    ] {
        assert!(text.contains(piece), "missing `{piece}` in:\n{text}");
    }
}

#[test]
fn host_part_shows_the_dispatch_and_is_not_compiled() {
    let text = emit_ok(&row_sum_program(ElemTy::F32, ElemTy::I32));
    let host = &text[text.find("#if 0 // host side").expect("host part")..];
    assert!(host.trim_end().ends_with("#endif // host side"), "{host}");
    for piece in [
        "void row_sum(id<MTLBuffer> x, id<MTLBuffer> y, int32_t k) {",
        "// row_sum_rows: 64 x 1 x 1 threadgroups of 256 x 1 x 1 threads",
        "[parpy_enc setComputePipelineState:parpy_pipeline_row_sum_rows];",
        "[parpy_enc setBuffer:x offset:0 atIndex:0];",
        "[parpy_enc setBuffer:y offset:0 atIndex:1];",
        "parpy_params_row_sum_rows parpy_params = {k}; // 4 bytes",
        "[parpy_enc setBytes:&parpy_params length:sizeof(parpy_params) atIndex:2];",
        "[parpy_enc dispatchThreadgroups:MTLSizeMake(64, 1, 1) threadsPerThreadgroup:MTLSizeMake(256, 1, 1)];",
        "[parpy_cmd waitUntilCompleted];",
    ] {
        assert!(host.contains(piece), "missing `{piece}` in:\n{host}");
    }
    // Nothing of the host part reaches the device code.
    assert!(!text[..text.find("#if 0").unwrap_or(0)].contains("MTL"));
}

#[test]
fn device_text_is_the_msl_part_of_the_file() {
    let out = emit(&row_sum_program(ElemTy::F32, ElemTy::I32), &metal_options())
        .unwrap_or_else(|e| panic!("{e}"));
    let dev = out.device_text.expect("Metal device text");
    assert!(out.text.contains(&dev));
    assert!(dev.starts_with("#include <metal_stdlib>"), "{dev}");
    assert!(dev.contains("[[kernel]] void row_sum_rows("), "{dev}");
    assert!(!dev.contains("#if 0") && !dev.contains("MTL"), "{dev}");
    assert_eq!(out.kernel_names, vec!["row_sum_rows".to_string()]);
}

#[test]
fn output_is_deterministic() {
    let a = emit_ok(&row_sum_program(ElemTy::F32, ElemTy::I32));
    let b = emit_ok(&row_sum_program(ElemTy::F32, ElemTy::I32));
    assert_eq!(a, b);
}

#[test]
fn generated_kernel_passes_the_clang_check_and_broken_ones_fail() {
    let text = emit_ok(&row_sum_program(ElemTy::F32, ElemTy::I32));
    if let Some(r) = clang("row_sum", &text) {
        r.unwrap_or_else(|e| panic!("clang rejected the generated Metal:\n{e}\n{text}"));
    } else {
        return;
    }
    // An undeclared identifier, a type error, and a double: each must fail.
    let broken = [
        (
            "undeclared",
            text.replace("simd_sum(acc)", "simd_sum(acc_typo)"),
        ),
        (
            "type_error",
            text.replace("y[(int64_t)parpy_block.x] =", "y ="),
        ),
        (
            "double",
            text.replace("float acc = 0.0f;", "double acc = 0.0;"),
        ),
        (
            "unknown_function",
            text.replace("simd_sum(acc)", "simd_reduce_all(acc)"),
        ),
    ];
    for (name, b) in broken {
        assert_ne!(b, text, "the {name} edit did not apply");
        match clang(name, &b) {
            Some(Err(_)) => {}
            Some(Ok(())) => panic!("clang accepted the broken kernel `{name}`:\n{b}"),
            None => {}
        }
    }
}

#[test]
fn float64_array_argument_is_an_error_at_the_argument() {
    let msg = emit_err(&row_sum_program(ElemTy::F64, ElemTy::I32), &metal_options());
    assert!(
        msg.contains("Metal does not support double-precision floating-point numbers (float64), but argument `x` is a float64 array"),
        "{msg}"
    );
    assert!(msg.contains("argument `y` is a float64 array"), "{msg}");
    assert!(msg.contains("astype(numpy.float32)"), "{msg}");
    // The values derived from the arguments are not reported again.
    assert!(!msg.contains("this value is a float64"), "{msg}");
}

#[test]
fn float64_scalar_argument_is_an_error_with_a_fix() {
    let msg = emit_err(&row_sum_program(ElemTy::F32, ElemTy::F64), &metal_options());
    assert!(msg.contains("argument `k` is a float64 scalar"), "{msg}");
    assert!(msg.contains("force_float_size"), "{msg}");
}

#[test]
fn float64_value_in_a_kernel_is_an_error() {
    let mut p = row_sum_program(ElemTy::F32, ElemTy::I32);
    // `acc = 0.0` computed in double, then converted.
    let body = &mut p.kernels[0].func.body;
    body[0] = assign(
        crate::ir::VarId(3),
        convert(float(0.0, ElemTy::F64), ElemTy::F32),
    );
    let msg = emit_err(&p, &metal_options());
    assert!(
        msg.contains("Metal does not support double-precision floating-point numbers (float64), but this value is a float64"),
        "{msg}"
    );
}

/// The SIMD-group functions take 16- and 32-bit values: a 64-bit sum is
/// reduced in 64 bits, its halves shuffled (wrapping through `uint64_t`),
/// an 8-bit one as 16-bit values; never narrowed to what `simd_sum` takes.
#[test]
fn wide_and_narrow_integer_simd_reductions_shuffle_their_own_type() {
    for (elem, shuffle, combine) in [
        (
            ElemTy::I64,
            "(int64_t)(((uint64_t)simd_shuffle_xor((uint)((uint64_t)v >> 32), k) << 32) | (uint64_t)simd_shuffle_xor((uint)v, k))",
            "v = (int64_t)((uint64_t)v + (uint64_t)o);",
        ),
        (
            ElemTy::U64,
            "(uint64_t)(((uint64_t)simd_shuffle_xor((uint)((uint64_t)v >> 32), k) << 32) | (uint64_t)simd_shuffle_xor((uint)v, k))",
            "v = v + o;",
        ),
        (
            ElemTy::I8,
            "(int8_t)simd_shuffle_xor((short)v, k)",
            "v = v + o;",
        ),
    ] {
        let text = emit_ok(&row_sum_program(elem, ElemTy::I32));
        let ty = c_writer::stdint_type(elem).unwrap();
        let helper = format!("parpy_warp_sum_{}", elem.short_name());
        assert!(text.contains(&format!("static inline {ty} {helper}({ty} v)")), "{text}");
        assert!(text.contains(&format!("acc = {helper}(acc);")), "{text}");
        assert!(text.contains(&format!("{ty} o = {shuffle};")), "{text}");
        assert!(text.contains(combine), "{text}");
        assert!(!text.contains("simd_sum"), "{text}");
        if let Some(r) = clang(&format!("row_sum_{}", elem.short_name()), &text) {
            r.unwrap_or_else(|e| panic!("clang rejected the generated Metal:\n{e}\n{text}"));
        }
    }
}

#[test]
fn cuda_only_options_are_errors() {
    let mut o = metal_options();
    o.use_cuda_thread_block_clusters = true;
    o.use_cuda_graphs = true;
    let msg = emit_err(&row_sum_program(ElemTy::F32, ElemTy::I32), &o);
    assert!(msg.contains("thread block clusters"), "{msg}");
    assert!(msg.contains("CUDA graphs"), "{msg}");
}

#[test]
fn bindings_number_buffers_in_parameter_order() {
    let p = row_sum_program(ElemTy::F32, ElemTy::I32);
    let written: BTreeSet<usize> = [1].into_iter().collect();
    let (b, at) = bindings(&p.kernels[0].func, &written);
    assert_eq!(
        b,
        vec![
            Binding::Buffer {
                index: 0,
                written: false
            },
            Binding::Buffer {
                index: 1,
                written: true
            },
            Binding::Field,
        ]
    );
    assert_eq!(at, Some(2));
}

#[test]
fn dispatch_plan_binds_arrays_then_packs_scalars() {
    let mut p = row_sum_program(ElemTy::F32, ElemTy::I32);
    // Add a bool and a long scalar after `k` to see the packing.
    for (name, elem) in [("flag", ElemTy::Bool), ("n", ElemTy::I64)] {
        let v = p.kernels[0].func.add_var(Var {
            name: name.into(),
            ty: Type::Scalar(elem),
            kind: VarKind::Param,
            value: None,
            span: sp(),
        });
        p.kernels[0].func.params.push(v);
    }
    let d = plan::dispatches(&p, &["row_sum_rows".to_string()]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.len(), 1);
    let d = &d[0];
    assert_eq!(d.name, "row_sum_rows");
    assert_eq!(d.threadgroups, [64, 1, 1]);
    assert_eq!(d.threads, [256, 1, 1]);
    assert_eq!(d.buffers, vec![(0, 0), (1, 1)]);
    assert_eq!(d.params_index, Some(2));
    let layout: Vec<(usize, ElemTy, usize)> = d
        .fields
        .iter()
        .map(|f| (f.param, f.elem, f.offset))
        .collect();
    assert_eq!(
        layout,
        vec![
            (2, ElemTy::I32, 0),
            (3, ElemTy::Bool, 4),
            (4, ElemTy::I64, 8)
        ]
    );
    assert_eq!(d.params_size, 16);
    assert!(plan::dispatches(&p, &[]).is_err());

    // The same layout is asserted in the generated code, where clang checks
    // it against the C++ layout of the struct.
    for (name, elem) in [("flag", ElemTy::Bool), ("n", ElemTy::I64)] {
        let v = p.host.add_var(Var {
            name: name.into(),
            ty: Type::Scalar(elem),
            kind: VarKind::Param,
            value: None,
            span: sp(),
        });
        p.host.params.push(v);
        if let StmtKind::Launch { args, .. } = &mut p.host.body[0].kind {
            args.push(v);
        }
    }
    let text = emit_ok(&p);
    assert!(
        text.contains(
            "struct parpy_params_row_sum_rows {\n  int32_t k;\n  bool flag;\n  int64_t n;\n};"
        ),
        "{text}"
    );
    assert!(
        text.contains("static_assert(sizeof(parpy_params_row_sum_rows) == 16,"),
        "{text}"
    );
    assert!(text.contains("parpy_params_row_sum_rows parpy_params = {k, flag, n}; // 16 bytes"));
    if let Some(r) = clang("packed", &text) {
        r.unwrap_or_else(|e| panic!("{e}\n{text}"));
        let wrong = text.replace("== 16,", "== 12,");
        assert!(matches!(clang("packed_wrong", &wrong), Some(Err(_))));
    }
}

#[test]
fn grid_sizes_come_from_their_attributes() {
    let mut p = row_sum_program(ElemTy::F32, ElemTy::I32);
    // y[block.x] = (float)(block_dim.x * grid_dim.y), by thread 0.
    let body = vec![if_then(
        bin(BinOp::Eq, gpu(GpuIndex::Thread(Axis::X)), int(0)),
        vec![store(
            crate::ir::VarId(1),
            vec![gpu(GpuIndex::Block(Axis::X))],
            convert(
                bin(
                    BinOp::Mul,
                    gpu(GpuIndex::BlockDim(Axis::X)),
                    gpu(GpuIndex::GridDim(Axis::Y)),
                ),
                ElemTy::F32,
            ),
        )],
    )];
    p.kernels[0].func.body = body;
    // The shared array is unused now: make it an (undeclared) local.
    p.kernels[0].func.vars[5].kind = VarKind::Local;
    let text = emit_ok(&p);
    for piece in [
        "uint3 parpy_block [[threadgroup_position_in_grid]],",
        "uint3 parpy_thread [[thread_position_in_threadgroup]],",
        "uint3 parpy_block_dim [[threads_per_threadgroup]],",
        "uint3 parpy_grid_dim [[threadgroups_per_grid]]) {",
        // (grid positions are index arithmetic: not wrapped through the
        // unsigned type as value arithmetic is, see `index_like`)
        "y[(int64_t)parpy_block.x] = (float)((int64_t)parpy_block_dim.x * (int64_t)parpy_grid_dim.y);",
    ] {
        assert!(text.contains(piece), "missing `{piece}` in:\n{text}");
    }
    // The unused parameters `x` and `k` are voided; the file passes.
    if let Some(r) = clang("grid_sizes", &text) {
        r.unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}

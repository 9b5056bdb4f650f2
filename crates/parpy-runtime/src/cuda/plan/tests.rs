//! The launch plan against a mock device: programs compiled by the real
//! front end and passes, run without a GPU.

use std::cell::RefCell;

use parpy_core::ir::{Expr, ExprKind, Place, Stmt, StmtKind};
use parpy_core::{ArgType, ElemTy, Options, ParSpec, SourceFile, StaticResolver};

use super::*;

type Launch = (usize, [u32; 3], [u32; 3], Vec<u64>);

#[derive(Default)]
struct Mock {
    /// (kernel, grid, block, packed parameter slots)
    launches: RefCell<Vec<Launch>>,
    allocs: RefCell<Vec<(u64, usize)>>,
    writes: RefCell<Vec<(u64, Vec<u8>)>>,
    reads: RefCell<Vec<u64>>,
    frees: RefCell<Vec<u64>>,
    fail_launch: Option<usize>,
    /// A kernel's index check fails: each launch stores this record
    /// through its last parameter (the bounds record).
    failed_check: Option<[i64; 2]>,
}

impl Device for Mock {
    fn launch(
        &self,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        _shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        if self.fail_launch == Some(kernel) {
            return Err(CudaError::Driver {
                call: "cuLaunchKernel".into(),
                name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
                msg: "an illegal memory access was encountered".into(),
                code: 700,
            });
        }
        // SAFETY: the plan passes pointers to 8-byte slots.
        let vals: Vec<u64> = params
            .iter()
            .map(|p| unsafe { *(*p as *const u64) })
            .collect();
        if let (Some(r), Some(&rec)) = (self.failed_check, vals.last()) {
            let mut record = [0i64; parpy_core::ir::RECORD_LEN];
            record[..2].copy_from_slice(&r);
            let bytes: Vec<u8> = record.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.writes.borrow_mut().push((rec, bytes));
        }
        self.launches.borrow_mut().push((kernel, grid, block, vals));
        Ok(())
    }
    fn alloc(&self, bytes: usize) -> Result<u64, CudaError> {
        let p = 0x1000_0000 + 0x1000 * self.allocs.borrow().len() as u64;
        self.allocs.borrow_mut().push((p, bytes));
        Ok(p)
    }
    fn free(&self, ptr: u64) {
        self.frees.borrow_mut().push(ptr);
    }
    fn write(&self, dst: u64, data: &[u8]) -> Result<(), CudaError> {
        self.writes.borrow_mut().push((dst, data.to_vec()));
        Ok(())
    }
    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), CudaError> {
        // the device "memory" holds what was last written there, else 7s
        let w = self.writes.borrow();
        match w.iter().rev().find(|(d, _)| *d == src) {
            Some((_, data)) => out.copy_from_slice(&data[..out.len()]),
            None => out.fill(7),
        }
        self.reads.borrow_mut().push(src);
        Ok(())
    }
}

fn program(src: &str, args: &[ArgType], par: &[(&str, i64)]) -> Program {
    let file = SourceFile::from_function_text("t.py", src, 1);
    let def = parpy_core::parse_function(file).expect("parses");
    let mut options = Options {
        specialize_scalars: false,
        ..Options::default()
    };
    for (l, n) in par {
        options.parallelize.insert(
            l.to_string(),
            ParSpec {
                threads: *n,
                tpb: None,
                reduction: false,
            },
        );
    }
    let p = parpy_core::sema::lower(&def, args, &StaticResolver::new(), &options).expect("lowers");
    parpy_core::passes::run_pipeline(p, &options, &mut String::new())
        .expect("passes")
        .0
}

fn arr(elem: ElemTy, n: i64) -> ArgType {
    ArgType::Array {
        elem,
        shape: vec![n],
    }
}

fn int() -> ArgType {
    ArgType::Scalar {
        elem: ElemTy::I64,
        value: None,
        weak: true,
    }
}

fn symbols(p: &Program) -> Vec<String> {
    (0..p.kernels.len()).map(|i| format!("k{i}")).collect()
}

const SMOOTH: &str = "@parpy.jit
def smooth(x, y, T, N):
    for t in range(T):
        parpy.label('a')
        for i in range(1, N - 1):
            y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0
        parpy.label('b')
        for i in range(1, N - 1):
            x[i] = y[i]
";

#[test]
fn host_loop_launches_each_kernel_per_step() {
    let p = program(
        SMOOTH,
        &[arr(ElemTy::F32, 100), arr(ElemTy::F32, 100), int(), int()],
        &[("a", 100), ("b", 100)],
    );
    assert_eq!(p.kernels.len(), 2);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    assert_eq!(plan.kernels()[0].symbol, "k0");
    let dev = Mock::default();
    plan.run(&dev, &[0xA000, 0xB000, 3, 100]).unwrap();
    let l = dev.launches.borrow();
    let order: Vec<usize> = l.iter().map(|x| x.0).collect();
    assert_eq!(order, vec![0, 1, 0, 1, 0, 1]);
    // the kernels receive the device pointers (and N when it is a parameter)
    for (_, grid, block, vals) in l.iter() {
        assert!(vals.contains(&0xA000) && vals.contains(&0xB000), "{vals:?}");
        assert!(grid.iter().all(|&g| g >= 1) && block.iter().all(|&b| b >= 1));
    }
    drop(l);
    // T = 0: no launch at all; negative T too
    let dev = Mock::default();
    plan.run(&dev, &[1, 2, 0, 100]).unwrap();
    plan.run(&dev, &[1, 2, (-4i64) as u64, 100]).unwrap();
    assert!(dev.launches.borrow().is_empty());
    // wrong argument count
    assert!(plan.run(&dev, &[1, 2]).is_err());
}

#[test]
fn python_integer_semantics_in_host_code() {
    let src = "@parpy.jit
def f(x, N):
    for t in range(N % 3 + N // 4):
        parpy.label('i')
        for i in range(16):
            x[i] = x[i] + 1.0
";
    let p = program(src, &[arr(ElemTy::F64, 16), int()], &[("i", 16)]);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    for (n, want) in [(-7i64, 0usize), (10, 3), (-5, 0), (-1, 1), (0, 0), (7, 2)] {
        let dev = Mock::default();
        plan.run(&dev, &[0x10, n as u64]).unwrap();
        assert_eq!(dev.launches.borrow().len(), want, "N = {n}");
    }
}

#[test]
fn host_loops_break_and_continue() {
    let src = "@parpy.jit
def f(x, N):
    for t in range(10):
        if t == 1:
            continue
        if t >= N:
            break
        parpy.label('i')
        for i in range(16):
            x[i] = x[i] + 1.0
    k = 0
    while True:
        k += 1
        if k % 2 == 0:
            continue
        if k > N:
            break
        parpy.label('i')
        for i in range(16):
            x[i] = x[i] * 2.0
";
    let p = program(src, &[arr(ElemTy::F64, 16), int()], &[("i", 16)]);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    // for: t in 0..min(N, 10) except 1; while: the odd k up to N
    for (n, want) in [(0i64, 0usize), (1, 2), (5, 4 + 3), (20, 9 + 10)] {
        let dev = Mock::default();
        plan.run(&dev, &[0x10, n as u64]).unwrap();
        assert_eq!(dev.launches.borrow().len(), want, "N = {n}");
    }
}

#[test]
fn device_temporaries_are_allocated_passed_and_freed() {
    let src = "@parpy.jit
def gpu_scalar(x, y):
    with parpy.gpu:
        m = x[0]
        for i in range(1, 10):
            if x[i] > m:
                m = x[i]
    parpy.label('i')
    for i in range(10):
        y[i] = x[i] - m
";
    let p = program(
        src,
        &[arr(ElemTy::F64, 10), arr(ElemTy::F64, 10)],
        &[("i", 10)],
    );
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0xA0, 0xB0]).unwrap();
    let allocs = dev.allocs.borrow().clone();
    assert_eq!(allocs.len(), 1, "{allocs:?}");
    assert_eq!(allocs[0].1, 8);
    let tmp = allocs[0].0;
    let l = dev.launches.borrow();
    assert_eq!(l.len(), 2);
    assert!(l.iter().all(|x| x.3.contains(&tmp)), "{l:?}");
    assert_eq!(*dev.frees.borrow(), vec![tmp]);
}

#[test]
fn launch_errors_name_kernel_and_function_and_free_temporaries() {
    let src = "@parpy.jit
def gpu_scalar(x, y):
    with parpy.gpu:
        m = x[0]
    parpy.label('i')
    for i in range(10):
        y[i] = x[i] - m
";
    let p = program(
        src,
        &[arr(ElemTy::F64, 10), arr(ElemTy::F64, 10)],
        &[("i", 10)],
    );
    let plan = Plan::new(&p, &["first".into(), "second".into()], &[]).unwrap();
    let dev = Mock {
        fail_launch: Some(1),
        ..Mock::default()
    };
    let e = plan.run(&dev, &[0xA0, 0xB0]).unwrap_err().to_string();
    assert!(e.contains("`second`") && e.contains("`gpu_scalar`"), "{e}");
    assert!(e.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{e}");
    assert_eq!(dev.frees.borrow().len(), 1);
}

#[test]
fn host_code_touching_device_data_is_rejected() {
    let mut p = program(
        SMOOTH,
        &[arr(ElemTy::F32, 100), arr(ElemTy::F32, 100), int(), int()],
        &[("a", 100), ("b", 100)],
    );
    let x = p.host.params[0];
    let span = p.host.span;
    let one = parpy_core::ir::Expr::new(
        parpy_core::ir::ExprKind::Float(1.0),
        Type::Scalar(ElemTy::F32),
        span,
    );
    p.host.body.push(Stmt::new(
        StmtKind::Assign {
            dst: Place::Index {
                array: x,
                indices: vec![parpy_core::ir::Expr::int(0, ElemTy::I64, span)],
            },
            value: one,
        },
        span,
    ));
    let e = Plan::new(&p, &symbols(&p), &[]).unwrap_err().to_string();
    assert!(e.contains("writes to the device array `x`"), "{e}");
    assert!(Plan::new(&p, &["only_one".into()], &[]).is_err());
}

#[test]
fn parameters_are_packed_in_their_c_size() {
    assert_eq!(
        pack(Value::Float(1.5), ParamKind::Scalar(ElemTy::F32)),
        1.5f32.to_bits() as u64
    );
    assert_eq!(
        pack(Value::Float(1.5), ParamKind::Scalar(ElemTy::F64)),
        1.5f64.to_bits()
    );
    assert_eq!(
        pack(Value::Int(-1), ParamKind::Scalar(ElemTy::I32)),
        0xffff_ffff
    );
    assert_eq!(
        pack(Value::Int(-1), ParamKind::Scalar(ElemTy::I64)),
        u64::MAX
    );
    assert_eq!(pack(Value::Int(300), ParamKind::Scalar(ElemTy::U8)), 44);
    assert_eq!(pack(Value::Bool(true), ParamKind::Scalar(ElemTy::Bool)), 1);
    assert_eq!(pack(Value::Ptr(0xdead_beef), ParamKind::Ptr), 0xdead_beef);
    assert_eq!(f16_bits(1.0), 0x3c00);
    assert_eq!(f16_bits(-2.0), 0xc000);
    assert_eq!(f16_bits(65504.0), 0x7bff);
    assert_eq!(f16_bits(1e6), 0x7c00);
    assert_eq!(f16_bits(5.960_464_5e-8), 0x0001);
    assert_eq!(f16_bits(0.1), 0x2e66);
    assert_eq!(
        pack(Value::Float(1.0), ParamKind::Scalar(ElemTy::F16)),
        0x3c00
    );
}

#[test]
fn host_code_initialises_device_temporaries() {
    // a manual reduction: the accumulator's temporary is set to 0 on the host
    let src = "@parpy.jit
def manual_sum(x, acc, N):
    parpy.label('N')
    for i in range(N):
        acc[0] += x[i]
";
    let mut options = Options {
        backend: parpy_core::Backend::Cuda,
        ..Options::default()
    };
    options.parallelize.insert(
        "N".into(),
        ParSpec {
            threads: 64,
            tpb: None,
            reduction: true,
        },
    );
    let def = parpy_core::parse_function(SourceFile::from_function_text("t.py", src, 1)).unwrap();
    let args = [
        arr(ElemTy::F32, 100),
        arr(ElemTy::F32, 1),
        ArgType::Scalar {
            elem: ElemTy::I64,
            value: Some(parpy_core::ScalarValue::Int(100)),
            weak: true,
        },
    ];
    let p = parpy_core::sema::lower(&def, &args, &StaticResolver::new(), &options).unwrap();
    let p = parpy_core::passes::run_pipeline(p, &options, &mut String::new())
        .unwrap()
        .0;
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0xA0, 0xB0, 100]).unwrap();
    let allocs = dev.allocs.borrow().clone();
    assert_eq!(allocs, vec![(0x1000_0000, 4)]);
    // 0.0f32 written into the temporary before the kernels read it
    assert_eq!(*dev.writes.borrow(), vec![(0x1000_0000, vec![0u8; 4])]);
    assert_eq!(dev.launches.borrow().len(), p.kernels.len());
    assert!(dev.launches.borrow()[0].3.contains(&0x1000_0000));
}

const GATHER: &str = "@parpy.jit
def gather(x, y, idx):
    parpy.label('i')
    for i in range(100):
        y[i] = x[idx[i]]
";

#[test]
fn a_failed_index_check_is_reported_after_the_launches() {
    // `x[idx[i]]` is checked on the device
    let p = program(
        GATHER,
        &[
            arr(ElemTy::F32, 100),
            arr(ElemTy::F32, 100),
            arr(ElemTy::I64, 100),
        ],
        &[("i", 100)],
    );
    let sites = &p.bounds.as_ref().expect("index checks").sites;
    assert_eq!(sites.len(), 1);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    // no failure: the record is allocated, zeroed, read back and freed
    let dev = Mock::default();
    plan.run(&dev, &[0xA000, 0xB000, 0xC000]).unwrap();
    let rec = dev.allocs.borrow()[0];
    const BYTES: usize = 8 * parpy_core::ir::RECORD_LEN;
    assert_eq!(rec.1, BYTES);
    assert_eq!(dev.writes.borrow()[0], (rec.0, vec![0u8; BYTES]));
    assert_eq!(*dev.reads.borrow(), vec![rec.0]);
    assert!(dev.frees.borrow().contains(&rec.0));
    // the kernel gets the record as its last argument
    assert!(dev
        .launches
        .borrow()
        .iter()
        .all(|l| l.3.last() == Some(&rec.0)));
    // a failure: IndexOutOfBounds naming the site
    let dev = Mock {
        failed_check: Some([1, 120]),
        ..Mock::default()
    };
    match plan.run(&dev, &[0xA000, 0xB000, 0xC000]).unwrap_err() {
        CudaError::IndexOutOfBounds(msg) => {
            assert!(
                msg.starts_with("`gather`: index 120 is out of bounds for axis 0 of `x`"),
                "{msg}"
            );
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_check_in_front_of_a_loop_fails_before_the_launch() {
    // N is passed at run time: `x[i + 1]` for i < N - 1 is checked once,
    // on the host
    let p = program(
        SMOOTH,
        &[arr(ElemTy::F32, 100), arr(ElemTy::F32, 100), int(), int()],
        &[("a", 100), ("b", 100)],
    );
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0xA000, 0xB000, 1, 100]).unwrap();
    assert_eq!(dev.launches.borrow().len(), 2);
    // no kernel checks: no record on the device, nothing read back
    assert!(dev.allocs.borrow().is_empty() && dev.reads.borrow().is_empty());
    let dev = Mock::default();
    match plan.run(&dev, &[0xA000, 0xB000, 1, 102]).unwrap_err() {
        CudaError::IndexOutOfBounds(msg) => {
            assert!(
                msg.starts_with("`smooth`: index 100 is out of bounds"),
                "{msg}"
            );
        }
        e => panic!("{e}"),
    }
    assert!(dev.launches.borrow().is_empty());
}

#[test]
fn host_code_reads_device_temporaries() {
    // t[0] = 1.5; T = int(t[0] * 2.0); then the time loop: three steps
    let mut p = program(
        SMOOTH,
        &[arr(ElemTy::F32, 100), arr(ElemTy::F32, 100), int(), int()],
        &[("a", 100), ("b", 100)],
    );
    let span = p.host.span;
    let tmp = p.host.add_var(parpy_core::ir::Var {
        name: "t".into(),
        ty: Type::Array {
            elem: ElemTy::F64,
            shape: vec![1],
        },
        kind: VarKind::Local,
        value: None,
        span,
    });
    let t_param = p.host.params[2];
    let idx = vec![parpy_core::ir::Expr::int(0, ElemTy::I64, span)];
    let f = |v: f64| Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), span);
    let read = Expr::new(
        ExprKind::Index {
            array: tmp,
            indices: idx.clone(),
        },
        Type::Scalar(ElemTy::F64),
        span,
    );
    let prod = Expr::new(
        ExprKind::Binary {
            op: BinOp::Mul,
            lhs: Box::new(read),
            rhs: Box::new(f(2.0)),
        },
        Type::Scalar(ElemTy::F64),
        span,
    );
    let conv = Expr::new(
        ExprKind::Convert {
            arg: Box::new(prod),
        },
        Type::Scalar(ElemTy::I64),
        span,
    );
    let mut pre = vec![
        Stmt::new(
            StmtKind::Assign {
                dst: Place::Index {
                    array: tmp,
                    indices: idx,
                },
                value: f(1.5),
            },
            span,
        ),
        Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(t_param),
                value: conv,
            },
            span,
        ),
    ];
    pre.append(&mut p.host.body);
    p.host.body = pre;
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0xA000, 0xB000, 100, 100]).unwrap();
    // t[0] (`x[i + 1]` is checked in front of the loops, on the host)
    assert_eq!(dev.reads.borrow().len(), 1);
    assert_eq!(dev.launches.borrow().len(), 6);
    assert_eq!(
        unpack(1.5f32.to_bits() as u64, ElemTy::F32),
        Value::Float(1.5)
    );
    assert_eq!(unpack(0xffff_fffe, ElemTy::I32), Value::Int(-2));
    assert_eq!(f16_value(0x3c00), 1.0);
    assert!((f16_value(f16_bits(0.1)) - 0.1).abs() < 1e-4);
}

#[test]
fn wide_row_reductions_launch_partials_then_finals() {
    // Benchmark G5's shape (narrower rows): 10 rows, 65536 threads per row
    // reduction, i.e. 64 blocks of 1024 per row, then one block per row.
    let src = "@parpy.jit
def row_sum(x, y):
    parpy.label('N')
    for i in range(10):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
";
    let x = ArgType::Array {
        elem: ElemTy::F32,
        shape: vec![10, 100_000],
    };
    // `program` runs the CPU pipeline; the split is a GPU pass.
    let def =
        parpy_core::parse_function(SourceFile::from_function_text("t.py", src, 1)).expect("parses");
    let mut options = Options {
        backend: parpy_core::Backend::Cuda,
        ..Options::default()
    };
    for (l, n) in [("N", 10), ("M", 65536)] {
        options.parallelize.insert(
            l.to_string(),
            ParSpec {
                threads: n,
                tpb: None,
                reduction: false,
            },
        );
    }
    let args = [x, arr(ElemTy::F32, 10)];
    let p = parpy_core::sema::lower(&def, &args, &StaticResolver::new(), &options).expect("lowers");
    let (p, warnings) =
        parpy_core::passes::run_pipeline(p, &options, &mut String::new()).expect("passes");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(p.kernels.len(), 2);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0xA0, 0xB0]).unwrap();
    let allocs = dev.allocs.borrow().clone();
    assert_eq!(allocs.len(), 1, "{allocs:?}");
    // 10 rows x 64 partials of f32
    assert_eq!(allocs[0].1, 640 * 4);
    let tmp = allocs[0].0;
    let l = dev.launches.borrow();
    let shapes: Vec<_> = l.iter().map(|x| (x.0, x.1, x.2)).collect();
    assert_eq!(
        shapes,
        vec![(0, [10, 64, 1], [1024, 1, 1]), (1, [10, 1, 1], [64, 1, 1])]
    );
    for launch in l.iter() {
        assert_eq!(launch.3, vec![0xA0, 0xB0, tmp]);
    }
    // The partials are only on the device: no host copies.
    assert!(dev.writes.borrow().is_empty());
    assert!(dev.reads.borrow().is_empty());
    assert_eq!(*dev.frees.borrow(), vec![tmp]);
}

fn float() -> ArgType {
    ArgType::Scalar {
        elem: ElemTy::F64,
        value: None,
        weak: true,
    }
}

/// How many times the kernel of `src` (host code deciding how often to
/// launch from floats `a` and `b`) is launched.
fn launches_for(src: &str, a: f64, b: f64) -> usize {
    let p = program(src, &[arr(ElemTy::F64, 16), float(), float()], &[("i", 16)]);
    let plan = Plan::new(&p, &symbols(&p), &[]).unwrap();
    let dev = Mock::default();
    plan.run(&dev, &[0x10, a.to_bits(), b.to_bits()]).unwrap();
    let n = dev.launches.borrow().len();
    n
}

#[test]
fn float_floor_division_and_modulo_in_host_code_are_pythons() {
    // floor(1.0 / 0.1) is 10; Python's 1.0 // 0.1 is 9.0 (the plan gave 10)
    let src = "@parpy.jit
def f(x, a, b):
    for t in range(int(a // b)):
        parpy.label('i')
        for i in range(16):
            x[i] = x[i] + 1.0
";
    assert_eq!(launches_for(src, 1.0, 0.1), 9);
    assert_eq!(launches_for(src, 7.5, 2.0), 3);
    // -0.0 % 1.0 is 0.0 in Python (the plan gave -0.0): its sign is +
    // (`1.0 / (a % b)` of Python floats is Python's ZeroDivisionError)
    let src = "@parpy.jit
def f(x, a, b):
    if math.copysign(1.0, a % b) > 0.0:
        parpy.label('i')
        for i in range(16):
            x[i] = x[i] + 1.0
";
    assert_eq!(launches_for(src, -0.0, 1.0), 1);
    assert_eq!(launches_for(src, -0.5, -1.0), 0);
}

#[test]
fn callbacks_get_device_views_and_scalars_in_order() {
    let src = "def f(x, y, n):\n    parpy.label('N')\n    for i in range(4):\n        x[i] = 1.0\n    for k in range(2):\n        cb(x, y[k + 1], n * 2)\n";
    let file = SourceFile::from_function_text("t.py", src, 1);
    let def = parpy_core::parse_function(file).expect("parses");
    let mut options = Options {
        specialize_scalars: false,
        backend: parpy_core::Backend::Cuda,
        ..Options::default()
    };
    options.parallelize.insert(
        "N".into(),
        ParSpec {
            threads: 4,
            tpb: None,
            reduction: false,
        },
    );
    let resolver = StaticResolver::new().with(
        "cb",
        parpy_core::Resolved::Callback {
            id: 7,
            name: "cb".into(),
        },
    );
    let args = [
        arr(ElemTy::F32, 4),
        ArgType::Array {
            elem: ElemTy::F32,
            shape: vec![3, 5],
        },
        int(),
    ];
    let p = parpy_core::sema::lower(&def, &args, &resolver, &options).expect("lowers");
    let p = parpy_core::passes::run_pipeline(p, &options, &mut String::new())
        .expect("passes")
        .0;
    let plan = Plan::new(&p, &symbols(&p), &[0; 1]).expect("plan");
    let dev = Mock::default();
    let seen = RefCell::new(vec![]);
    plan.run_calling(&dev, &[0x100, 0x200, 3], &|site, vals| {
        // the kernel before the first call was queued before it
        assert_eq!(dev.launches.borrow().len(), 1);
        seen.borrow_mut().push((site, vals.to_vec()));
        Ok(())
    })
    .expect("runs");
    let row = |k: u64| CallbackValue::Array {
        ptr: 0x200 + k * 20,
        bytes: 20,
    };
    let x = CallbackValue::Array {
        ptr: 0x100,
        bytes: 16,
    };
    let six = CallbackValue::Scalar(Value::Int(6));
    assert_eq!(
        seen.into_inner(),
        vec![(0, vec![x, row(1), six]), (0, vec![x, row(2), six])]
    );
    // a failing callback stops the plan with its error
    let e = plan
        .run_calling(&dev, &[0x100, 0x200, 3], &|_, _| {
            Err(CudaError::Plan("raised".into()))
        })
        .unwrap_err();
    assert!(e.to_string().contains("raised"), "{e}");
    // `run` has no Python to call
    assert!(plan.run(&dev, &[0x100, 0x200, 3]).is_err());
}

//! Specializations on a fake machine with several GPUs: every allocation,
//! module load, copy and launch is recorded with the device it went to.

use std::collections::HashMap;
use std::sync::Mutex;

use parpy_core::ir::Program;
use parpy_core::{ArgType, Backend, ElemTy, Options, ParSpec, SourceFile};

use super::*;
use crate::cuda::placement::{self, ArgDevice, Driver, StreamUse};

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Bind,
    Load(Vec<String>),
    /// A kernel allowed a non-portable cluster size at load.
    NonPortable(String),
    GraphBuild(Vec<usize>),
    GraphUpdate(usize),
    GraphLaunch(Stream),
    GraphDestroy,
    Launch {
        kernel: usize,
        stream: Stream,
    },
    Alloc {
        bytes: usize,
        stream: Stream,
    },
    Free {
        stream: Stream,
    },
    ToDevice {
        bytes: usize,
        stream: Stream,
    },
    ToHost {
        bytes: usize,
        stream: Stream,
    },
    Sync(Stream),
    Join {
        waiter: Stream,
        on: Stream,
    },
}

/// What happened, in order: (device, operation).
type Log = Mutex<Vec<(i64, Op)>>;

struct FakeGpu {
    ordinal: i64,
    arch: u32,
    log: &'static Log,
    /// The launches of each graph replay, in order.
    graph_runs: Mutex<Vec<Vec<Launch>>>,
}

impl FakeGpu {
    fn note(&self, op: Op) {
        self.log.lock().unwrap().push((self.ordinal, op));
    }
}

/// A module of the fake: the device it was loaded on.
struct FakeModule(i64);

/// A graph of the fake: the launches its nodes hold.
struct FakeGraph(Vec<Launch>);

impl Gpu for FakeGpu {
    type Module = FakeModule;
    type Graph = FakeGraph;

    fn ordinal(&self) -> i64 {
        self.ordinal
    }
    fn arch(&self) -> u32 {
        self.arch
    }
    fn bind(&self) -> Result<(), CudaError> {
        self.note(Op::Bind);
        Ok(())
    }
    fn load_module(&self, _cubin: &[u8], kernels: &[KernelInfo]) -> Result<FakeModule, CudaError> {
        self.note(Op::Load(kernels.iter().map(|k| k.symbol.clone()).collect()));
        for k in kernels.iter().filter(|k| k.non_portable_cluster()) {
            self.note(Op::NonPortable(k.symbol.clone()));
        }
        Ok(FakeModule(self.ordinal))
    }
    fn graph_build(
        &self,
        module: &FakeModule,
        launches: &[Launch],
    ) -> Result<FakeGraph, CudaError> {
        assert_eq!(module.0, self.ordinal, "a graph of another device's module");
        self.note(Op::GraphBuild(launches.iter().map(|l| l.kernel).collect()));
        Ok(FakeGraph(launches.to_vec()))
    }
    fn graph_update(
        &self,
        _module: &FakeModule,
        graph: &mut FakeGraph,
        node: usize,
        launch: &Launch,
    ) -> Result<(), CudaError> {
        assert_eq!(
            graph.0[node].kernel, launch.kernel,
            "a node of another kernel"
        );
        graph.0[node] = launch.clone();
        self.note(Op::GraphUpdate(node));
        Ok(())
    }
    fn graph_launch(&self, graph: &FakeGraph, stream: Stream) -> Result<(), CudaError> {
        self.graph_runs.lock().unwrap().push(graph.0.clone());
        self.note(Op::GraphLaunch(stream));
        Ok(())
    }
    fn graph_destroy(&self, _graph: FakeGraph) {
        self.note(Op::GraphDestroy);
    }
    fn launch(
        &self,
        module: &FakeModule,
        kernel: usize,
        _grid: [u32; 3],
        _block: [u32; 3],
        _shared: u32,
        stream: Stream,
        _params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        if module.0 != self.ordinal {
            return Err(CudaError::Plan(format!(
                "a module of device {} launched on device {}",
                module.0, self.ordinal
            )));
        }
        self.note(Op::Launch { kernel, stream });
        Ok(())
    }
    fn alloc(&self, bytes: usize, stream: Stream) -> Result<u64, CudaError> {
        self.note(Op::Alloc { bytes, stream });
        // the device's own address range
        Ok(((self.ordinal as u64 + 1) << 40) + 0x1000 * self.log.lock().unwrap().len() as u64)
    }
    fn free(&self, ptr: u64, stream: Stream) {
        assert_eq!(
            ptr >> 40,
            self.ordinal as u64 + 1,
            "freed on another device"
        );
        self.note(Op::Free { stream });
    }
    unsafe fn copy_htod(
        &self,
        dst: u64,
        _src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError> {
        assert_eq!(
            dst >> 40,
            self.ordinal as u64 + 1,
            "copied to another device"
        );
        self.note(Op::ToDevice { bytes, stream });
        Ok(())
    }
    unsafe fn copy_dtoh(
        &self,
        _dst: *mut c_void,
        src: u64,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError> {
        assert_eq!(
            src >> 40,
            self.ordinal as u64 + 1,
            "copied from another device"
        );
        self.note(Op::ToHost { bytes, stream });
        Ok(())
    }
    fn sync(&self, stream: Stream) -> Result<(), CudaError> {
        self.note(Op::Sync(stream));
        Ok(())
    }
    fn join(&self, waiter: Stream, on: Stream) -> Result<(), CudaError> {
        self.note(Op::Join { waiter, on });
        Ok(())
    }
}

/// A machine with `gpus.len()` fake GPUs; device pointers `0xD_xxxx` are
/// on device D (what `cuPointerGetAttribute` would say).
struct FakeDriver {
    gpus: Vec<&'static FakeGpu>,
    log: &'static Log,
}

impl FakeDriver {
    fn new(n: i64) -> FakeDriver {
        let log: &'static Log = Box::leak(Box::new(Mutex::new(Vec::new())));
        FakeDriver {
            gpus: (0..n)
                .map(|ordinal| {
                    &*Box::leak(Box::new(FakeGpu {
                        ordinal,
                        arch: 90,
                        log,
                        graph_runs: Mutex::new(Vec::new()),
                    }))
                })
                .collect(),
            log,
        }
    }

    fn take_log(&self) -> Vec<(i64, Op)> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

impl FakeDriver {
    /// Device `ordinal` (as `driver::context`).
    fn gpu(&self, ordinal: i64) -> Result<&'static FakeGpu, CudaError> {
        self.gpus
            .get(ordinal as usize)
            .copied()
            .ok_or_else(|| CudaError::NoDriver(format!("there is no CUDA device {ordinal}")))
    }
}

impl Driver for FakeDriver {
    fn pointer_device(&self, ptr: u64) -> Result<i64, CudaError> {
        let d = (ptr >> 16) as i64;
        if d < self.gpus.len() as i64 && ptr & 0xffff != 0 {
            Ok(d)
        } else {
            Err(CudaError::Plan("not a device pointer".into()))
        }
    }
}

const AXPY: &str = "@parpy.jit
def axpy(a, x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = a * x[i] + y[i]
";

/// `axpy(a: float, x: f32[n], y: f32[n], N)` for the Cuda backend, its
/// plan, and how each parameter is passed: x on the device, y a NumPy
/// array (staged, written).
fn axpy(n: i64) -> (Plan, Vec<(usize, Pass)>) {
    let arr = ArgType::Array {
        elem: ElemTy::F32,
        shape: vec![n],
    };
    let scalar = |elem| ArgType::Scalar {
        elem,
        value: None,
        weak: true,
    };
    let args = [scalar(ElemTy::F64), arr.clone(), arr, scalar(ElemTy::I64)];
    let mut options = Options {
        backend: Backend::Cuda,
        specialize_scalars: false,
        bounds_check: false,
        ..Options::default()
    };
    options.parallelize.insert(
        "N".into(),
        ParSpec {
            threads: n,
            tpb: None,
            reduction: false,
        },
    );
    let file = SourceFile::from_function_text("t.py", AXPY, 1);
    let def = parpy_core::parse_function(file).expect("parses");
    let p = parpy_core::sema::lower(&def, &args, &parpy_core::StaticResolver::new(), &options)
        .expect("lowers");
    let p: Program = parpy_core::passes::run_pipeline(p, &options, &mut String::new())
        .expect("passes")
        .0;
    let symbols: Vec<String> = (0..p.kernels.len()).map(|i| format!("k{i}")).collect();
    let plan = Plan::new(&p, &symbols, &[]).expect("plans");
    let params = p
        .host
        .params
        .iter()
        .map(|&v| match p.host.var(v).name.as_str() {
            "a" => (0, Pass::Scalar),
            "x" => (1, Pass::Device),
            "y" => (
                2,
                Pass::Host {
                    bytes: 4 * n as usize,
                    written: true,
                },
            ),
            _ => (3, Pass::Scalar),
        })
        .collect();
    (plan, params)
}

/// The argument slots of a call: a = 2.0, x at `x`, y a host array, N.
fn vals(x: u64, y: &mut [f32]) -> Vec<u64> {
    vec![
        2.0f64.to_bits(),
        x,
        y.as_mut_ptr() as usize as u64,
        y.len() as u64,
    ]
}

#[test]
fn arguments_on_device_1_allocate_load_and_launch_on_device_1() {
    let drv = FakeDriver::new(2);
    // x: a torch tensor on cuda:1; z (unused): a CAI array whose pointer is on 1
    let args = [
        ArgDevice {
            name: "x",
            device: Some(1),
            ptr: 0x1_0100,
        },
        ArgDevice {
            name: "z",
            device: None,
            ptr: 0x1_0200,
        },
    ];
    let device = placement::place(&drv, "axpy", &args, None).unwrap();
    assert_eq!(device, 1);
    let (plan, params) = axpy(64);
    let spec =
        Specialization::load(drv.gpu(device).unwrap(), b"cubin", plan, params, false).unwrap();
    assert_eq!(spec.gpu.ordinal(), 1);
    let mut y = vec![1.0f32; 64];
    let streams = placement::choose_streams([StreamUse::On(0x5000), StreamUse::Any]);
    spec.run(&vals(0x1_0100, &mut y), &streams, None).unwrap();
    let log = drv.take_log();
    assert!(log.iter().all(|(d, _)| *d == 1), "{log:?}");
    let ops: Vec<&Op> = log.iter().map(|(_, op)| op).collect();
    assert_eq!(ops[0], &Op::Load(vec!["k0".into()]));
    let s = 0x5000;
    assert_eq!(
        &ops[1..],
        &[
            &Op::Bind,
            &Op::Alloc {
                bytes: 256,
                stream: s
            },
            &Op::ToDevice {
                bytes: 256,
                stream: s
            },
            &Op::Launch {
                kernel: 0,
                stream: s
            },
            &Op::ToHost {
                bytes: 256,
                stream: s
            },
            &Op::Sync(s),
            &Op::Free { stream: s },
        ]
    );
}

#[test]
fn numpy_only_calls_run_on_device_0_or_the_chosen_one() {
    let drv = FakeDriver::new(3);
    for (explicit, want) in [(None, 0), (Some(2), 2)] {
        let device = placement::place(&drv, "axpy", &[], explicit).unwrap();
        assert_eq!(device, want);
        let (plan, mut params) = axpy(8);
        params[1].1 = Pass::Host {
            bytes: 32,
            written: false,
        };
        let spec =
            Specialization::load(drv.gpu(device).unwrap(), b"", plan, params, false).unwrap();
        let mut x = vec![0.5f32; 8];
        let mut y = vec![1.0f32; 8];
        let mut v = vals(0, &mut y);
        v[1] = x.as_mut_ptr() as usize as u64;
        spec.run(&v, &placement::Streams::default(), None).unwrap();
        let log = drv.take_log();
        assert!(log.iter().all(|(d, _)| *d == want), "{log:?}");
        let count = |f: fn(&Op) -> bool| log.iter().filter(|(_, op)| f(op)).count();
        assert_eq!(count(|op| matches!(op, Op::Alloc { stream: 0, .. })), 2);
        // only the written one comes back
        assert_eq!(count(|op| matches!(op, Op::ToHost { .. })), 1);
        assert_eq!(count(|op| matches!(op, Op::Free { .. })), 2);
    }
}

#[test]
fn two_devices_give_two_specializations_each_on_its_own_device() {
    // the binding's in-memory cache, in small: the key holds the device of
    // the device arguments (with the shape), and a miss places and loads
    let drv = FakeDriver::new(2);
    let mut cache: HashMap<(i64, i64), Specialization<FakeGpu>> = HashMap::new();
    let mut y = vec![0.0f32; 16];
    for x in [0x0_0100u64, 0x1_0100, 0x0_0200, 0x1_0300] {
        let on = drv.pointer_device(x).unwrap();
        let spec = cache.entry((16, on)).or_insert_with(|| {
            let arg = [ArgDevice {
                name: "x",
                device: None,
                ptr: x,
            }];
            let d = placement::place(&drv, "axpy", &arg, None).unwrap();
            let (plan, params) = axpy(16);
            Specialization::load(drv.gpu(d).unwrap(), b"", plan, params, false).unwrap()
        });
        spec.run(&vals(x, &mut y), &Default::default(), None)
            .unwrap();
    }
    assert_eq!(cache.len(), 2);
    assert_eq!(cache[&(16, 0)].gpu.ordinal(), 0);
    assert_eq!(cache[&(16, 1)].gpu.ordinal(), 1);
    let log = drv.take_log();
    let loads: Vec<i64> = log
        .iter()
        .filter(|(_, op)| matches!(op, Op::Load(_)))
        .map(|(d, _)| *d)
        .collect();
    assert_eq!(loads, vec![0, 1]);
    let launches: Vec<i64> = log
        .iter()
        .filter(|(_, op)| matches!(op, Op::Launch { .. }))
        .map(|(d, _)| *d)
        .collect();
    assert_eq!(launches, vec![0, 1, 0, 1]);
}

#[test]
fn other_streams_wait_before_and_after_the_call() {
    let drv = FakeDriver::new(1);
    let (plan, mut params) = axpy(8);
    params[2].1 = Pass::Device;
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, false).unwrap();
    drv.take_log();
    // x on a torch stream, y's __cuda_array_interface__ names the
    // per-thread default stream
    let streams = placement::choose_streams([
        StreamUse::On(0x7000),
        StreamUse::On(placement::STREAM_PER_THREAD),
    ]);
    spec.run(&[0, 0x0_0100, 0x0_0200, 8], &streams, None)
        .unwrap();
    let ops: Vec<Op> = drv.take_log().into_iter().map(|(_, op)| op).collect();
    assert_eq!(
        ops,
        vec![
            Op::Bind,
            Op::Join {
                waiter: 0x7000,
                on: 2
            },
            Op::Launch {
                kernel: 0,
                stream: 0x7000
            },
            Op::Join {
                waiter: 2,
                on: 0x7000
            },
        ]
    );
}

/// A program compiled for the Cuda backend with `options` (Cuda backend,
/// run-time scalars) and `par`, and its plan with kernels `k0, k1, ...`.
fn compiled(src: &str, args: &[ArgType], par: &[(&str, i64)], options: Options) -> Plan {
    let mut options = Options {
        backend: Backend::Cuda,
        specialize_scalars: false,
        ..options
    };
    for (l, t) in par {
        options.parallelize.insert(
            l.to_string(),
            ParSpec {
                threads: *t,
                tpb: None,
                reduction: false,
            },
        );
    }
    let file = SourceFile::from_function_text("t.py", src, 1);
    let def = parpy_core::parse_function(file).expect("parses");
    let p = parpy_core::sema::lower(&def, args, &parpy_core::StaticResolver::new(), &options)
        .expect("lowers");
    let p = parpy_core::passes::run_pipeline(p, &options, &mut String::new())
        .expect("passes")
        .0;
    let symbols: Vec<String> = (0..p.kernels.len()).map(|i| format!("k{i}")).collect();
    Plan::new(&p, &symbols, &[]).expect("plans")
}

fn ops(drv: &FakeDriver) -> Vec<Op> {
    drv.take_log().into_iter().map(|(_, op)| op).collect()
}

#[test]
fn a_graph_is_built_on_the_first_call_replayed_then_updated_when_a_pointer_changes() {
    let drv = FakeDriver::new(1);
    let (plan, mut params) = axpy(8);
    params[2].1 = Pass::Device;
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, true).unwrap();
    assert!(spec.uses_graph());
    drv.take_log();
    let s = placement::Streams::default();
    // first call: the graph of its one launch is built, then launched
    spec.run(&[2.0f64.to_bits(), 0x100, 0x200, 8], &s, None)
        .unwrap();
    assert_eq!(
        ops(&drv),
        vec![Op::Bind, Op::GraphBuild(vec![0]), Op::GraphLaunch(0)]
    );
    // the same arguments: replayed as it is
    spec.run(&[2.0f64.to_bits(), 0x100, 0x200, 8], &s, None)
        .unwrap();
    assert_eq!(ops(&drv), vec![Op::Bind, Op::GraphLaunch(0)]);
    // another x and another scalar: the node's parameters are updated
    spec.run(&[3.0f64.to_bits(), 0x300, 0x200, 8], &s, None)
        .unwrap();
    assert_eq!(
        ops(&drv),
        vec![Op::Bind, Op::GraphUpdate(0), Op::GraphLaunch(0)]
    );
    let runs = drv.gpus[0].graph_runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0], runs[1]);
    // kernel parameters: a as f64 bits, x, y, N (the plan's order)
    let p = &runs[2][0].params;
    assert!(
        p.contains(&0x300) && p.contains(&3.0f64.to_bits()),
        "{p:x?}"
    );
    assert!(!runs[0][0].params.contains(&0x300));
    drop(spec);
    assert_eq!(ops(&drv), vec![Op::Bind, Op::Sync(0), Op::GraphDestroy]);
}

const STEPS: &str = "@parpy.jit
def steps(x, T, N):
    for t in range(T):
        parpy.label('N')
        for i in range(N):
            x[i] = x[i] + 1.0
";

#[test]
fn a_graph_is_rebuilt_when_a_run_time_scalar_changes_the_launches() {
    let drv = FakeDriver::new(1);
    let scalar = ArgType::Scalar {
        elem: ElemTy::I64,
        value: None,
        weak: true,
    };
    let args = [
        ArgType::Array {
            elem: ElemTy::F32,
            shape: vec![16],
        },
        scalar.clone(),
        scalar,
    ];
    let plan = compiled(STEPS, &args, &[("N", 16)], Options::default());
    assert_eq!(plan.graph_blocker(), None);
    let params = vec![(0, Pass::Device), (1, Pass::Scalar), (2, Pass::Scalar)];
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, true).unwrap();
    drv.take_log();
    let s = placement::Streams::default();
    spec.run(&[0x100, 3, 16], &s, None).unwrap();
    spec.run(&[0x100, 3, 16], &s, None).unwrap();
    spec.run(&[0x100, 5, 16], &s, None).unwrap();
    assert_eq!(
        ops(&drv),
        vec![
            Op::Bind,
            Op::GraphBuild(vec![0, 0, 0]),
            Op::GraphLaunch(0),
            Op::Bind,
            Op::GraphLaunch(0),
            Op::Bind,
            Op::GraphDestroy,
            Op::GraphBuild(vec![0, 0, 0, 0, 0]),
            Op::GraphLaunch(0),
        ]
    );
}

#[test]
fn a_graph_keeps_its_bounds_record_and_numpy_copies_update_its_nodes() {
    // bounds checks on (x[j[i]] is checked in the kernel): the record is
    // allocated once and zeroed before each replay, read after it; y is a
    // NumPy array staged per call, so its node takes the new copy
    let src = "@parpy.jit
def gather(x, y, j, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[j[i]]
";
    let drv = FakeDriver::new(1);
    let arr = ArgType::Array {
        elem: ElemTy::F32,
        shape: vec![8],
    };
    let n = ArgType::Scalar {
        elem: ElemTy::I64,
        value: None,
        weak: true,
    };
    let idx = ArgType::Array {
        elem: ElemTy::I64,
        shape: vec![8],
    };
    let plan = compiled(
        src,
        &[arr.clone(), arr, idx, n],
        &[("N", 8)],
        Options::default(),
    );
    let params = vec![
        (0, Pass::Device),
        (
            1,
            Pass::Host {
                bytes: 32,
                written: true,
            },
        ),
        (2, Pass::Device),
        (3, Pass::Scalar),
    ];
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, true).unwrap();
    drv.take_log();
    let mut y = vec![0.0f32; 8];
    let yp = y.as_mut_ptr() as usize as u64;
    let s = placement::Streams::default();
    spec.run(&[0x100, yp, 0x300, 8], &s, None).unwrap();
    spec.run(&[0x100, yp, 0x300, 8], &s, None).unwrap();
    let log = ops(&drv);
    let record_allocs = log
        .iter()
        .filter(
            |op| matches!(op, Op::Alloc { bytes, .. } if *bytes == 8 * parpy_core::ir::RECORD_LEN),
        )
        .count();
    assert_eq!(record_allocs, 1, "{log:?}");
    let builds = log
        .iter()
        .filter(|op| matches!(op, Op::GraphBuild(_)))
        .count();
    assert_eq!(builds, 1, "{log:?}");
    // the second call: stage y, zero the record, update y's node, replay,
    // read the record, copy y back
    let second = log.iter().rposition(|op| *op == Op::Bind).unwrap();
    const RECORD: usize = 8 * parpy_core::ir::RECORD_LEN;
    let kinds: Vec<&str> = log[second..]
        .iter()
        .map(|op| match op {
            Op::Alloc { .. } => "alloc",
            Op::ToDevice { bytes: 32, .. } => "stage",
            Op::ToDevice { bytes: RECORD, .. } => "zero record",
            Op::GraphUpdate(_) => "update",
            Op::GraphLaunch(_) => "replay",
            Op::ToHost { bytes: RECORD, .. } => "read record",
            Op::ToHost { .. } => "copy back",
            Op::Sync(_) => "sync",
            Op::Free { .. } => "free",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "other",
            "alloc",
            "stage",
            "zero record",
            "update",
            "replay",
            "read record",
            "sync",
            "copy back",
            "sync",
            "free"
        ]
    );
    drop(spec);
    let end = ops(&drv);
    assert!(end.contains(&Op::GraphDestroy), "{end:?}");
    assert_eq!(
        end.iter()
            .filter(|op| matches!(op, Op::Free { .. }))
            .count(),
        1,
        "the record is freed with the graph: {end:?}"
    );
}

#[test]
fn host_reads_of_device_values_run_without_a_graph() {
    // the host reads the reduction's result (gpu_host_reads) to compute
    // the next launch's scalar: launches one by one
    let src = "@parpy.jit
def twice(x, y, N):
    parpy.label('N')
    s = parpy.operators.sum(x[:])
    parpy.label('N')
    for i in range(N):
        y[i] = x[i] / s
";
    let arr = ArgType::Array {
        elem: ElemTy::F32,
        shape: vec![64],
    };
    let n = ArgType::Scalar {
        elem: ElemTy::I64,
        value: None,
        weak: true,
    };
    let plan = compiled(
        src,
        &[arr.clone(), arr, n],
        &[("N", 64)],
        Options::default(),
    );
    assert!(plan.graph_blocker().is_some());
    let drv = FakeDriver::new(1);
    let params = vec![(0, Pass::Device), (1, Pass::Device), (2, Pass::Scalar)];
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, true).unwrap();
    assert!(!spec.uses_graph());
}

const ROWS: &str = "@parpy.jit
def rows(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])
";

/// The row sums of a 4 x 50000 array, 1024 threads per block, `m` threads
/// per row, with thread block clusters of at most `max` blocks (`None`:
/// without clusters).
fn rows_plan(m: i64, max: Option<i64>) -> Plan {
    let args = [
        ArgType::Array {
            elem: ElemTy::F32,
            shape: vec![4, 50000],
        },
        ArgType::Array {
            elem: ElemTy::F32,
            shape: vec![4],
        },
        ArgType::Scalar {
            elem: ElemTy::I64,
            value: Some(parpy_core::ScalarValue::Int(4)),
            weak: true,
        },
    ];
    let options = Options {
        use_cuda_thread_block_clusters: max.is_some(),
        max_thread_blocks_per_cluster: max.unwrap_or(8),
        ..Options::default()
    };
    compiled(ROWS, &args, &[("N", 4), ("M", m)], options)
}

#[test]
fn cluster_kernels_launch_plainly_and_large_clusters_opt_in_at_load() {
    // 8 blocks per row: one kernel, clusters of (1, 8, 1), a portable size
    let plan = rows_plan(8192, Some(8));
    assert_eq!(plan.kernels().len(), 1);
    let k = &plan.kernels()[0];
    assert_eq!(k.cluster, Some([1, 8, 1]));
    assert_eq!(k.grid, [4, 8, 1]);
    assert!(!k.non_portable_cluster());
    let drv = FakeDriver::new(1);
    let params = vec![(0, Pass::Device), (1, Pass::Device), (2, Pass::Scalar)];
    let spec = Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, false).unwrap();
    spec.run(&[0x100, 0x200, 4], &Default::default(), None)
        .unwrap();
    assert_eq!(
        ops(&drv),
        vec![
            Op::Load(vec!["k0".into()]),
            Op::Bind,
            Op::Launch {
                kernel: 0,
                stream: 0
            }
        ]
    );
    // 16 blocks: the kernel is allowed a non-portable cluster size first
    let plan = rows_plan(16384, Some(16));
    assert_eq!(plan.kernels()[0].cluster, Some([1, 16, 1]));
    let params = vec![(0, Pass::Device), (1, Pass::Device), (2, Pass::Scalar)];
    Specialization::load(drv.gpu(0).unwrap(), b"", plan, params, false).unwrap();
    assert_eq!(
        ops(&drv),
        vec![Op::Load(vec!["k0".into()]), Op::NonPortable("k0".into())]
    );
    // more blocks than a cluster holds: two kernels, no clusters
    let plan = rows_plan(16384, Some(8));
    assert_eq!(plan.kernels().len(), 2);
    assert!(plan.kernels().iter().all(|k| k.cluster.is_none()));
}

#[test]
fn clusters_on_a_gpu_older_than_sm_90_are_a_clear_error() {
    let log: &'static Log = Box::leak(Box::new(Mutex::new(Vec::new())));
    let old: &'static FakeGpu = Box::leak(Box::new(FakeGpu {
        ordinal: 0,
        arch: 86,
        log,
        graph_runs: Mutex::new(Vec::new()),
    }));
    let params = vec![(0, Pass::Device), (1, Pass::Device), (2, Pass::Scalar)];
    let e = Specialization::load(old, b"", rows_plan(8192, Some(8)), params, false)
        .err()
        .expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("compute capability 9.0") && msg.contains("cuda:0 is 8.6"),
        "{msg}"
    );
    assert!(log.lock().unwrap().is_empty(), "nothing was loaded");
    // the same program without clusters loads
    let args_plan = rows_plan(8192, None);
    let params = vec![(0, Pass::Device), (1, Pass::Device), (2, Pass::Scalar)];
    assert!(Specialization::load(old, b"", args_plan, params, false).is_ok());
}

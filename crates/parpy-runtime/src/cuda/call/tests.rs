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

//! Where a Cuda call runs: the device, from the device arguments and
//! `opts.device`, and the stream, from what the arguments say about theirs.
//! Pure decisions (the driver is asked only through [`Driver`]), tested
//! without a GPU.
//!
//! The rules:
//! - **Device.** With `opts.device` set, every device argument must be on
//!   it. Unset, the call runs on the device of its device arguments, which
//!   must all be on one; with none (NumPy arrays and scalars only), on
//!   device 0.
//! - **Stream.** Each device argument, in argument order, names a stream
//!   (torch's or CuPy's current stream on its device, a
//!   `__cuda_array_interface__` `stream` field) or none (no field). A
//!   DLPack array, read with `__dlpack__()` and no stream, was made ready
//!   by its producer for the legacy default stream: it names that stream,
//!   but only as one to wait for. The call is queued on the first stream
//!   named (else the legacy default stream); every other distinct stream
//!   named is joined: the call's stream waits for the work queued on it
//!   before the call, and it waits for the call's work after it (events,
//!   no host synchronisation).

use std::fmt;

use super::CudaError;

/// `CU_STREAM_LEGACY`: the legacy default stream, as the driver API's
/// stream `0` is.
pub const STREAM_LEGACY: u64 = 1;
/// `CU_STREAM_PER_THREAD`: the calling thread's default stream.
pub const STREAM_PER_THREAD: u64 = 2;

/// A device argument on a miss: its name, and its device when the object
/// says (torch, DLPack), else the pointer the driver is asked about
/// (`__cuda_array_interface__`).
#[derive(Clone, Copy, Debug)]
pub struct ArgDevice<'a> {
    pub name: &'a str,
    pub device: Option<i64>,
    pub ptr: u64,
}

/// Why a call has no device to run on (a `ValueError` in Python).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacementError {
    /// `opts.device` is set and argument `arg` is on another device.
    NotOnDevice {
        func: String,
        arg: String,
        device: i64,
        want: i64,
    },
    /// Two device arguments on two devices (the first one that differs
    /// from the first argument's).
    Split {
        func: String,
        first: (String, i64),
        other: (String, i64),
    },
    /// A `__cuda_array_interface__` pointer the driver does not know.
    NotDeviceMemory { func: String, arg: String },
}

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacementError::NotOnDevice {
                func,
                arg,
                device,
                want,
            } => write!(
                f,
                "argument `{arg}` of `{func}` is on CUDA device {device}, but the function runs \
                 on device {want} (opts.device); move it with .to('cuda:{want}'), or set \
                 opts.device = {device} (or None: run on the arguments' device)"
            ),
            PlacementError::Split {
                func,
                first: (a, da),
                other: (b, db),
            } => write!(
                f,
                "arguments `{a}` (cuda:{da}) and `{b}` (cuda:{db}) of `{func}` are on different \
                 CUDA devices; move them to one device"
            ),
            PlacementError::NotDeviceMemory { func, arg } => write!(
                f,
                "argument `{arg}` of `{func}`: its __cuda_array_interface__ pointer is not CUDA \
                 device memory"
            ),
        }
    }
}

/// The device a call runs on: `explicit` (`opts.device`) when set, which
/// every argument must be on; else the one device of `args` (name,
/// device), device 0 when there are none.
pub fn choose_device(
    func: &str,
    args: &[(&str, i64)],
    explicit: Option<i64>,
) -> Result<i64, PlacementError> {
    if let Some(want) = explicit {
        return match args.iter().find(|(_, d)| *d != want) {
            Some(&(arg, device)) => Err(PlacementError::NotOnDevice {
                func: func.to_string(),
                arg: arg.to_string(),
                device,
                want,
            }),
            None => Ok(want),
        };
    }
    let Some(&(first, d0)) = args.first() else {
        return Ok(0);
    };
    match args.iter().find(|(_, d)| *d != d0) {
        Some(&(other, d)) => Err(PlacementError::Split {
            func: func.to_string(),
            first: (first.to_string(), d0),
            other: (other.to_string(), d),
        }),
        None => Ok(d0),
    }
}

/// What placing a call asks the driver (the real one, or a fake).
pub trait Driver {
    /// The device that owns a device pointer.
    fn pointer_device(&self, ptr: u64) -> Result<i64, CudaError>;
}

/// [`choose_device`] for the arguments of a miss, asking `driver` about
/// the pointers of arguments that do not say their device.
pub fn place<D: Driver>(
    driver: &D,
    func: &str,
    args: &[ArgDevice<'_>],
    explicit: Option<i64>,
) -> Result<i64, PlacementError> {
    let mut devices = Vec::with_capacity(args.len());
    for a in args {
        let d = match a.device {
            Some(d) => d,
            None => driver
                .pointer_device(a.ptr)
                .map_err(|_| PlacementError::NotDeviceMemory {
                    func: func.to_string(),
                    arg: a.name.to_string(),
                })?,
        };
        devices.push((a.name, d));
    }
    choose_device(func, &devices, explicit)
}

/// What one device argument says about its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamUse {
    /// Nothing (no `stream` field, a DLPack array): no synchronisation.
    Any,
    /// Its work is queued on this stream (a `CUstream`; 0 and
    /// [`STREAM_LEGACY`] are the legacy default stream).
    On(u64),
    /// Its producer made it ready for this stream (DLPack without a stream
    /// argument: the legacy default stream): joined, and the call's stream
    /// only when no argument says [`StreamUse::On`].
    After(u64),
}

/// The `stream` field of a `__cuda_array_interface__` (version 3): absent
/// or None is [`StreamUse::Any`], 1 the legacy default stream, 2 the
/// per-thread default stream, another value a `CUstream`; 0 is not allowed
/// (the error says why).
pub fn cai_stream(field: Option<u64>) -> Result<StreamUse, &'static str> {
    match field {
        None => Ok(StreamUse::Any),
        Some(0) => Err(
            "stream 0 is not allowed by __cuda_array_interface__ version 3 (1 is the legacy \
             default stream, 2 the per-thread default stream, None no synchronisation)",
        ),
        Some(s) => Ok(StreamUse::On(s)),
    }
}

/// The streams of one call: it is queued on `launch`; `joins` are the
/// other streams its arguments named (distinct, in argument order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Streams {
    pub launch: u64,
    pub joins: Vec<u64>,
}

/// One stream handle for each stream: the legacy default stream is 0.
pub fn canonical(s: u64) -> u64 {
    if s == STREAM_LEGACY {
        0
    } else {
        s
    }
}

/// The streams of a call whose device arguments (in argument order) say
/// `uses` (see the module's rules).
pub fn choose_streams(uses: impl IntoIterator<Item = StreamUse>) -> Streams {
    let uses: Vec<StreamUse> = uses.into_iter().collect();
    let named = |after: bool| {
        uses.iter().filter_map(move |u| match *u {
            StreamUse::On(s) if !after => Some(canonical(s)),
            StreamUse::After(s) if after => Some(canonical(s)),
            _ => None,
        })
    };
    let launch = named(false).chain(named(true)).next().unwrap_or(0);
    let mut out = Streams {
        launch,
        joins: vec![],
    };
    for u in &uses {
        let s = match *u {
            StreamUse::On(s) | StreamUse::After(s) => canonical(s),
            StreamUse::Any => continue,
        };
        if s != launch && !out.joins.contains(&s) {
            out.joins.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_of_the_arguments_when_not_set() {
        assert_eq!(choose_device("f", &[], None), Ok(0));
        assert_eq!(choose_device("f", &[("x", 1)], None), Ok(1));
        assert_eq!(choose_device("f", &[("x", 1), ("y", 1)], None), Ok(1));
        assert_eq!(choose_device("f", &[("x", 3)], None), Ok(3));
    }

    #[test]
    fn arguments_on_two_devices_name_both() {
        let e = choose_device("f", &[("x", 0), ("y", 0), ("z", 1)], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "arguments `x` (cuda:0) and `z` (cuda:1) of `f` are on different CUDA devices; \
             move them to one device"
        );
    }

    #[test]
    fn explicit_device_must_hold_every_argument() {
        assert_eq!(choose_device("f", &[], Some(2)), Ok(2));
        assert_eq!(choose_device("f", &[("x", 2), ("y", 2)], Some(2)), Ok(2));
        let e = choose_device("f", &[("x", 0), ("y", 1)], Some(0)).unwrap_err();
        assert_eq!(
            e,
            PlacementError::NotOnDevice {
                func: "f".into(),
                arg: "y".into(),
                device: 1,
                want: 0
            }
        );
        let m = e.to_string();
        assert!(m.contains("argument `y` of `f` is on CUDA device 1"), "{m}");
        assert!(m.contains("runs on device 0 (opts.device)"), "{m}");
    }

    struct Pointers(Vec<(u64, i64)>);

    impl Driver for Pointers {
        fn pointer_device(&self, ptr: u64) -> Result<i64, CudaError> {
            self.0
                .iter()
                .find(|(p, _)| *p == ptr)
                .map(|&(_, d)| d)
                .ok_or_else(|| CudaError::Plan("not a device pointer".into()))
        }
    }

    #[test]
    fn pointers_say_the_device_of_cai_arguments() {
        let drv = Pointers(vec![(0x100, 1), (0x200, 0)]);
        let a = |name, device, ptr| ArgDevice { name, device, ptr };
        assert_eq!(place(&drv, "f", &[a("x", None, 0x100)], None), Ok(1));
        assert_eq!(
            place(&drv, "f", &[a("x", Some(1), 0), a("y", None, 0x100)], None),
            Ok(1)
        );
        let e = place(&drv, "f", &[a("x", None, 0x200), a("y", None, 0x100)], None);
        assert!(matches!(e, Err(PlacementError::Split { .. })), "{e:?}");
        assert_eq!(
            place(&drv, "f", &[a("x", None, 0x300)], None),
            Err(PlacementError::NotDeviceMemory {
                func: "f".into(),
                arg: "x".into()
            })
        );
    }

    #[test]
    fn cai_stream_field() {
        assert_eq!(cai_stream(None), Ok(StreamUse::Any));
        assert_eq!(cai_stream(Some(1)), Ok(StreamUse::On(STREAM_LEGACY)));
        assert_eq!(cai_stream(Some(2)), Ok(StreamUse::On(STREAM_PER_THREAD)));
        assert_eq!(cai_stream(Some(0xdead00)), Ok(StreamUse::On(0xdead00)));
        assert!(cai_stream(Some(0)).unwrap_err().contains("not allowed"));
    }

    #[test]
    fn first_named_stream_launches_the_others_are_joined() {
        use StreamUse::{Any, On};
        assert_eq!(choose_streams([]), Streams::default());
        assert_eq!(choose_streams([Any, Any]), Streams::default());
        // the legacy stream is one stream, however it is spelled
        assert_eq!(choose_streams([On(1), On(0), Any]), Streams::default());
        assert_eq!(
            choose_streams([Any, On(0x50), On(0x50), On(2)]),
            Streams {
                launch: 0x50,
                joins: vec![2]
            }
        );
        assert_eq!(
            choose_streams([On(1), On(0x60), On(0x50), On(0x60), On(0)]),
            Streams {
                launch: 0,
                joins: vec![0x60, 0x50]
            }
        );
    }

    #[test]
    fn a_dlpack_array_waits_for_the_legacy_stream_without_choosing_it() {
        use StreamUse::{After, Any, On};
        let legacy = After(STREAM_LEGACY);
        // alone: the call runs on the legacy default stream
        assert_eq!(choose_streams([legacy, Any]), Streams::default());
        // with torch's side stream, in either order: launched there, and
        // the legacy default stream is joined
        let side = Streams {
            launch: 0x70,
            joins: vec![0],
        };
        assert_eq!(choose_streams([legacy, On(0x70)]), side);
        assert_eq!(choose_streams([On(0x70), legacy]), side);
        assert_eq!(choose_streams([On(0), legacy]), Streams::default());
    }
}

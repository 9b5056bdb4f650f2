//! The Metal side of the launch plan. The plan itself is the final
//! `ir::Program` (host code with `Launch` statements, kernels with their
//! `LaunchInfo`), as for CUDA; what Metal adds is how each kernel's
//! parameters are bound: arrays to buffer indices in parameter order, and
//! the scalars packed into one struct passed with `setBytes` at the next
//! index. A Metal runtime needs exactly this to encode a dispatch, and the
//! printed host part is written from it.

use std::collections::BTreeSet;

use super::{bindings, Binding};
use crate::back::error::EmitError;
use crate::ir::{Function, Kernel, Program};
use crate::types::ElemTy;

/// One scalar field of a kernel's constant parameter struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Position of the parameter in the kernel's parameter list.
    pub param: usize,
    pub elem: ElemTy,
    /// Byte offset in the struct (MSL scalars are aligned to their size).
    pub offset: usize,
}

/// How to dispatch one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispatch {
    /// The kernel function's name in the Metal library.
    pub name: String,
    /// Threadgroups per grid.
    pub threadgroups: [i64; 3],
    /// Threads per threadgroup.
    pub threads: [i64; 3],
    /// `(parameter position, buffer index)` of each array parameter.
    pub buffers: Vec<(usize, usize)>,
    /// Buffer index of the parameter struct, when the kernel has scalars.
    pub params_index: Option<usize>,
    pub fields: Vec<Field>,
    /// `sizeof` the parameter struct (0 without scalars).
    pub params_size: usize,
}

/// The dispatch of every kernel of `p`; `names[i]` is the emitted name of
/// kernel i (`EmitOutput::kernel_names`).
pub fn dispatches(p: &Program, names: &[String]) -> Result<Vec<Dispatch>, EmitError> {
    if names.len() != p.kernels.len() {
        return Err(format!(
            "{} kernels but {} kernel names",
            p.kernels.len(),
            names.len()
        )
        .into());
    }
    p.kernels
        .iter()
        .zip(names)
        .map(|(k, n)| dispatch(k, n))
        .collect()
}

/// The scalar fields of a kernel's parameter struct, in parameter order,
/// and `sizeof` the struct (0 without scalars).
pub fn param_struct(f: &Function) -> Result<(Vec<Field>, usize), EmitError> {
    let (binds, _) = bindings(f, &BTreeSet::new());
    let mut fields = vec![];
    let (mut offset, mut align) = (0usize, 1usize);
    for (i, (b, &v)) in binds.iter().zip(&f.params).enumerate() {
        if *b != Binding::Field {
            continue;
        }
        let var = f.var(v);
        let elem = var
            .ty
            .elem()
            .ok_or_else(|| format!("kernel parameter `{}` has no type", var.name))?;
        let size = elem.size();
        offset = offset.div_ceil(size) * size;
        fields.push(Field {
            param: i,
            elem,
            offset,
        });
        offset += size;
        align = align.max(size);
    }
    let size = if fields.is_empty() {
        0
    } else {
        offset.div_ceil(align) * align
    };
    Ok((fields, size))
}

/// The dispatch of one kernel.
pub fn dispatch(k: &Kernel, name: &str) -> Result<Dispatch, EmitError> {
    let (binds, params_index) = bindings(&k.func, &BTreeSet::new());
    let buffers = binds
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match b {
            Binding::Buffer { index, .. } => Some((i, *index)),
            Binding::Field => None,
        })
        .collect();
    let (fields, params_size) = param_struct(&k.func)?;
    Ok(Dispatch {
        name: name.to_string(),
        threadgroups: k.launch.blocks,
        threads: k.launch.threads,
        buffers,
        params_index,
        fields,
        params_size,
    })
}

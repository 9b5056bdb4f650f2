//! `np.einsum(subscripts, *operands)`: NumPy's parse of the subscripts
//! (`parse`: its ValueErrors, the implicit output, `...`), then the sum of
//! products written with the constructs `np.dot` and `np.outer` use
//! (`calls.rs` `dot`): each operand given new axes (`with_axes`), reversed
//! (`x.T`) where its labels run the other way, or its diagonal taken
//! (`np.diagonal`, a label twice in one operand), so that every label has
//! one place; their product summed along the places of the labels the
//! output leaves out, in the operands' promoted type (NumPy's einsum
//! keeps it: an int32 sum is int32), each output element's terms added in
//! order (`AccRule::Element`, as `np.dot`).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ReduceOp};
use crate::syntax::ast;
use crate::types::ElemTy;

use super::slices::{AccRule, Axes};
use super::{Lowerer, TExpr};

/// The subscripts parsed: each operand's labels, one per dimension (the
/// dimensions of its `...` labelled `1..=n` from the right, so operands
/// broadcast there as NumPy aligns them), and the output's.
#[derive(Debug, PartialEq)]
pub(super) struct Spec {
    pub inputs: Vec<Vec<u8>>,
    pub output: Vec<u8>,
}

/// A label as NumPy names it: `'j'`, or the dimensions of `...`.
fn label_text(c: u8) -> String {
    match c.is_ascii_alphabetic() {
        true => format!("'{}'", c as char),
        false => "of '...'".to_string(),
    }
}

/// One operand's (or the output's) subscripts: its letters and where its
/// `...` is (`Err`: NumPy's message).
fn labels(part: &str, whose: &str) -> Result<(Vec<u8>, Option<usize>), String> {
    let (mut out, mut ellipsis) = (vec![], None);
    let b = part.as_bytes();
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            c if c.is_ascii_alphabetic() => out.push(c),
            b' ' => {}
            b'.' if ellipsis.is_none() && b[k..].starts_with(b"...") => {
                ellipsis = Some(out.len());
                k += 2;
            }
            b'.' => {
                return Err(format!(
                    "einstein sum subscripts string contains a '.' that is not part of an ellipsis ('...') in {whose}"
                ))
            }
            c => {
                return Err(format!(
                    "invalid subscript '{}' in einstein sum subscripts string, subscripts must be letters",
                    c as char
                ))
            }
        }
        k += 1;
    }
    Ok((out, ellipsis))
}

/// NumPy's reading of `subscripts` for operands of `ranks` dimensions;
/// `Err` is the message of the ValueError NumPy raises.
pub(super) fn parse(subscripts: &str, ranks: &[usize]) -> Result<Spec, String> {
    let (lhs, out) = match subscripts.split_once("->") {
        Some((l, o)) => (l, Some(o)),
        None => (subscripts, None),
    };
    if lhs.contains('-') {
        return Err(
            "einstein sum subscript string does not contain proper '->' output specified"
                .to_string(),
        );
    }
    let parts: Vec<&str> = lhs.split(',').collect();
    // (NumPy's two messages, as it words them)
    if parts.len() < ranks.len() {
        return Err("fewer operands provided to einstein sum function than specified in the subscripts string".to_string());
    }
    if parts.len() > ranks.len() {
        return Err("more operands provided to einstein sum function than specified in the subscripts string".to_string());
    }
    let mut given = vec![];
    let mut dots = 0;
    for (k, (part, &rank)) in parts.iter().zip(ranks).enumerate() {
        let (letters, ellipsis) = labels(part, &format!("operand {k}"))?;
        if letters.len() > rank {
            return Err(format!(
                "einstein sum subscripts string contains too many subscripts for operand {k}"
            ));
        }
        if ellipsis.is_none() && letters.len() < rank {
            return Err("operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions.".to_string());
        }
        let n = rank - letters.len();
        dots = dots.max(n);
        given.push((letters, ellipsis, n));
    }
    // the dimensions of `...`, right-aligned: labels `dots`..=1
    let dot_labels = |n: usize| (1..=n as u8).rev().collect::<Vec<u8>>();
    let inputs: Vec<Vec<u8>> = given
        .into_iter()
        .map(|(mut letters, ellipsis, n)| {
            if let Some(at) = ellipsis {
                letters.splice(at..at, dot_labels(n));
            }
            letters
        })
        .collect();
    let count = |c: u8| inputs.iter().flatten().filter(|&&d| d == c).count();
    let output = match out {
        Some(o) => {
            let (letters, ellipsis) = labels(o, "the output")?;
            for (k, &c) in letters.iter().enumerate() {
                if letters[..k].contains(&c) {
                    return Err(format!(
                        "einstein sum subscripts string includes output subscript '{}' multiple times",
                        c as char
                    ));
                }
                if count(c) == 0 {
                    return Err(format!(
                        "einstein sum subscripts string included output subscript '{}' which never appeared in an input",
                        c as char
                    ));
                }
            }
            let mut letters = letters;
            match ellipsis {
                Some(at) => {
                    letters.splice(at..at, dot_labels(dots));
                }
                None if dots > 0 => return Err("output has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions.".to_string()),
                None => {}
            }
            letters
        }
        // NumPy's implicit output: the dimensions of `...`, then the
        // letters that appear once, in the order of their codes
        None => {
            let mut o = dot_labels(dots);
            o.extend((b'A'..=b'z').filter(|c| c.is_ascii_alphabetic() && count(*c) == 1));
            o
        }
    };
    Ok(Spec { inputs, output })
}

/// How an operand can be laid out along the labels' places.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Form {
    /// An array, or a subscript of one: new axes anywhere, and its axes
    /// reversed (`x.T`).
    Array,
    /// Built elementwise from arrays: new axes anywhere (given to each
    /// array in it), its axes in their order.
    Elementwise,
    /// Anything else (a diagonal): its axes last, in their order.
    Fixed,
}

/// The places of the labels: the output's in its order, the summed ones
/// anywhere around them, chosen so that each operand's labels run in one
/// direction (the other only for an `Array`, which is then reversed) and
/// a `Fixed` operand's labels come last; of those, the one that reverses
/// fewest operands. `None` when there is none.
fn places(output: &[u8], summed: &[u8], ops: &[(Vec<u8>, Form)]) -> Option<(Vec<u8>, Vec<bool>)> {
    let all: Vec<u8> = output.iter().chain(summed).copied().collect();
    let n = all.len();
    let mut best: Option<(usize, Vec<u8>, Vec<bool>)> = None;
    let mut order: Vec<usize> = (0..n).collect();
    // (Heap's algorithm would do; lexicographic order keeps the output's
    // own order first. At most 8 labels are searched: more keep theirs.)
    loop {
        let placed: Vec<u8> = order.iter().map(|&k| all[k]).collect();
        let pos = |c: u8| placed.iter().position(|&d| d == c).unwrap_or(0);
        let outputs_in_order = output.windows(2).all(|w| pos(w[0]) < pos(w[1]));
        if outputs_in_order {
            let mut reversed = vec![];
            let ok = ops.iter().all(|(labels, form)| {
                let p: Vec<usize> = labels.iter().map(|&c| pos(c)).collect();
                let up = p.windows(2).all(|w| w[0] < w[1]);
                let down = p.windows(2).all(|w| w[0] > w[1]);
                let last = p.iter().max().is_none_or(|&m| m + 1 == n);
                let fits = match form {
                    Form::Array => up || down,
                    Form::Elementwise => up,
                    Form::Fixed => up && last && p.first().is_none_or(|&f| f + p.len() == n),
                };
                reversed.push(!up);
                fits
            });
            let cost = reversed.iter().filter(|&&r| r).count();
            if ok && best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((cost, placed, reversed));
                if cost == 0 {
                    break;
                }
            }
        }
        if n > 8 || !next_permutation(&mut order) {
            break;
        }
    }
    best.map(|(_, p, r)| (p, r))
}

/// The next permutation of `v` in lexicographic order; false after the
/// last.
fn next_permutation(v: &mut [usize]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap_or(i);
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

impl Lowerer<'_, '_> {
    /// `np.einsum(subscripts, *operands)` (see the module doc); `args`
    /// the subscripts and the operands (`keywords` checked `optimize=`,
    /// which does not change the sums parpy does).
    pub(super) fn einsum(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let Some((first, operands)) = args.split_first() else {
            self.arity_error(name, "the subscripts and the operands", 0, span);
            return None;
        };
        let ast::ExprKind::Str(subscripts) = &first.kind else {
            self.error(
                Diagnostic::error(format!(
                    "the subscripts of `{name}` must be a string literal in parpy functions"
                ))
                .at(first.span, "not a string literal")
                .help(format!("write them in the call: `{name}('ij,j->i', a, b)`")),
            );
            return None;
        };
        if let Some(x) = operands.iter().find(|x| x.is_number_literal()) {
            self.error(
                Diagnostic::error(format!("`{name}` of a Python number"))
                    .at(x.span, "a number")
                    .note(
                        "NumPy makes it a 0-d float64 or int64 array, whose type the result takes",
                    )
                    .help("multiply the result by the number instead"),
            );
            return None;
        }
        let ranks: Vec<usize> = operands.iter().map(|x| self.rank(x)).collect();
        let spec = match parse(subscripts, &ranks) {
            Ok(s) => s,
            Err(message) => {
                self.error(
                    Diagnostic::error(message)
                        .at(first.span, "these subscripts")
                        .note(format!(
                            "NumPy's einsum raises ValueError for operands of {} dimensions",
                            ranks
                                .iter()
                                .map(|r| r.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                        .raises("ValueError"),
                );
                return None;
            }
        };
        self.check_einsum_sizes(&spec, operands, first.span)?;
        // the diagonal of an operand with a label twice
        let mut ops: Vec<(ast::Expr, Vec<u8>, Form)> = vec![];
        for (x, labels) in operands.iter().zip(&spec.inputs) {
            let repeated = labels
                .iter()
                .enumerate()
                .any(|(k, c)| labels[..k].contains(c));
            if !repeated {
                let form = if self.einsum_array(x) {
                    Form::Array
                } else if self.with_axes(x, &vec![true; labels.len()]).is_some() {
                    Form::Elementwise
                } else {
                    Form::Fixed
                };
                ops.push((x.clone(), labels.clone(), form));
            } else if labels.len() == 2 {
                let diag = Self::numpy_call("diagonal", vec![x.clone()], x.span);
                ops.push((diag, vec![labels[0]], Form::Fixed));
            } else {
                self.error(
                    Diagnostic::error(format!("`{name}` of a label repeated in an operand of more than 2 dimensions is not supported"))
                        .at(x.span, format!("{} dimensions", labels.len()))
                        .help("take the diagonal of a matrix (`'ii'`, `'ii->i'`), or index the other dimensions first"),
                );
                return None;
            }
        }
        let mut summed: Vec<u8> = vec![];
        for c in spec.inputs.iter().flatten() {
            if !spec.output.contains(c) && !summed.contains(c) {
                summed.push(*c);
            }
        }
        let shapes: Vec<(Vec<u8>, Form)> = ops.iter().map(|(_, l, f)| (l.clone(), *f)).collect();
        let Some((placed, reversed)) = places(&spec.output, &summed, &shapes) else {
            self.error(
                Diagnostic::error(format!("`{name}` with these subscripts is not supported in parpy functions"))
                    .at(first.span, "no one order of the labels suits every operand")
                    .note("parpy gives each operand new axes, and reverses the axes of an array or a subscript of one (`x.T`); it does not otherwise permute them, nor reverse a computed operand's")
                    .help("index the leading dimensions first (`np.einsum('ij->ji', x[b])`), name a computed operand (a local array), or write the sum as loops"),
            );
            return None;
        };
        let n = placed.len();
        let pos = |c: u8| placed.iter().position(|&d| d == c).unwrap_or(0);
        // NumPy's einsum of float16 multiplies and adds in float32 and
        // rounds the result once (as its dot)
        let mut elems = vec![];
        for (x, _, _) in &ops {
            elems.push(self.reduced_elem(x)?);
        }
        let et = elems.iter().copied().reduce(super::types::promote_strong)?;
        let mut product: Option<ast::Expr> = None;
        for ((x, labels, _), rev) in ops.iter().zip(&reversed) {
            let (x, labels) = match rev {
                true => (
                    self.einsum_reversed(x)?,
                    labels.iter().rev().copied().collect(),
                ),
                false => (x.clone(), labels.clone()),
            };
            let x = match labels.first() {
                None => x,
                Some(&c) => {
                    let layout: Vec<bool> =
                        (pos(c)..n).map(|q| labels.contains(&placed[q])).collect();
                    match layout.iter().all(|&b| b) {
                        true => x,
                        false => self.with_axes(&x, &layout)?,
                    }
                }
            };
            let x = match et {
                ElemTy::F16 => super::local_arrays::astype_to(&x, ElemTy::F32, x.span),
                _ => x,
            };
            product = Some(match product {
                None => x,
                Some(p) => ast::Expr::binary(BinOp::Mul, p, x, span),
            });
        }
        let product = product?;
        let value = if summed.is_empty() {
            self.lower_expr(&product)?
        } else {
            if !spec.output.is_empty() {
                self.axis = Some(Axes {
                    axes: summed.iter().map(|&c| pos(c) as i64 - n as i64).collect(),
                    keepdims: false,
                    span,
                });
            }
            match et {
                // (a sum of bools is NumPy's logical or: `np.any`'s)
                ElemTy::Bool => {
                    self.truth_reduction = true;
                    self.reduction(ReduceOp::Max, &product, span)?
                }
                _ => {
                    self.reduction_with(ReduceOp::Sum, &product, span, AccRule::Element)?
                        .0
                }
            }
        };
        match et {
            ElemTy::F16 => Some(TExpr {
                e: super::types::convert(value.e, ElemTy::F16),
                weak: false,
            }),
            _ => Some(value),
        }
    }

    /// Whether `x` is an array or a subscript of one, which `with_axes`
    /// and `einsum_reversed` take.
    fn einsum_array(&self, x: &ast::Expr) -> bool {
        let array = match &x.kind {
            ast::ExprKind::Subscript { value, .. } => value,
            _ => x,
        };
        let array = super::expr::transpose_of(array).unwrap_or(array);
        matches!(array.kind, ast::ExprKind::Name(_)) && self.array_arg(array).is_some()
    }

    /// `x` with its axes reversed: `x.T` of an array, `x.T[idx reversed]`
    /// of a subscript `x[idx]`, `x` of `x.T`.
    fn einsum_reversed(&self, x: &ast::Expr) -> Option<ast::Expr> {
        if let Some(a) = super::expr::transpose_of(x) {
            return Some(a.clone());
        }
        let t = ast::Expr {
            kind: ast::ExprKind::Attr {
                value: Box::new(x.clone()),
                attr: "T".to_string(),
            },
            span: x.span,
        };
        match &x.kind {
            ast::ExprKind::Name(_) => Some(t),
            _ => self.transposed_subscript(&t),
        }
    }

    /// NumPy's ValueErrors of sizes, where the shapes are known: a label
    /// twice in an operand on dimensions of different lengths, and a
    /// label on dimensions of different lengths, neither 1, in two
    /// operands.
    fn check_einsum_sizes(&mut self, spec: &Spec, operands: &[ast::Expr], at: Span) -> Option<()> {
        let mut seen: Vec<(u8, i64, usize)> = vec![];
        let single = operands.len() == 1;
        for (k, (x, labels)) in operands.iter().zip(&spec.inputs).enumerate() {
            let (from, diags) = (self.pre.len(), self.sh.diags.len());
            let shape = self.array_shape(x).flatten();
            self.pre.truncate(from);
            self.sh.diags.truncate(diags);
            let Some(shape) = shape else { continue };
            let mut own: Vec<(u8, i64)> = vec![];
            for (&c, &d) in labels.iter().zip(&shape) {
                if let Some(&(_, e)) = own.iter().find(|(l, _)| *l == c) {
                    if e != d {
                        let whose = match single {
                            true => "single operand".to_string(),
                            false => format!("operand {k}"),
                        };
                        self.error(
                            Diagnostic::error(format!("dimensions in {whose} for collapsing index '{}' don't match ({e} != {d})", c as char))
                                .at(x.span, format!("shape {}", super::local_arrays::shape_text(&shape)))
                                .also(at, "the subscripts")
                                .raises("ValueError"),
                        );
                        return None;
                    }
                    continue;
                }
                own.push((c, d));
                match seen.iter().find(|(l, _, _)| *l == c) {
                    Some(&(_, e, j)) if e != d && e != 1 && d != 1 => {
                        self.error(
                            Diagnostic::error(format!(
                                "operands could not be broadcast together: label {} has length {e} in operand {j} and {d} in operand {k}",
                                label_text(c)
                            ))
                            .at(x.span, format!("shape {}", super::local_arrays::shape_text(&shape)))
                            .also(at, "the subscripts")
                            .note("NumPy's einsum raises ValueError (\"operands could not be broadcast together with remapped shapes\")")
                            .raises("ValueError"),
                        );
                        return None;
                    }
                    Some(&(_, 1, _)) => {
                        seen.retain(|(l, _, _)| *l != c);
                        seen.push((c, d, k));
                    }
                    Some(_) => {}
                    None => seen.push((c, d, k)),
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str, ranks: &[usize]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let spec = parse(s, ranks).unwrap();
        (spec.inputs, spec.output)
    }

    #[test]
    fn implicit_output_is_the_labels_seen_once_in_code_order() {
        assert_eq!(ok("ij,jk", &[2, 2]).1, b"ik".to_vec());
        assert_eq!(ok("ba", &[2]).1, b"ab".to_vec());
        assert_eq!(ok("Ba", &[2]).1, b"Ba".to_vec());
        assert_eq!(ok("ii", &[2]).1, b"".to_vec());
        assert_eq!(ok("...i,i", &[2, 1]).1, vec![1]);
    }

    #[test]
    fn ellipsis_dimensions_align_from_the_right() {
        let (inputs, output) = ok("i...->...i", &[3]);
        assert_eq!(inputs, vec![vec![b'i', 2, 1]]);
        assert_eq!(output, vec![2, 1, b'i']);
        let (inputs, _) = ok("...,...", &[2, 1]);
        assert_eq!(inputs, vec![vec![2, 1], vec![1]]);
    }

    #[test]
    fn numpy_value_errors() {
        let err = |s: &str, r: &[usize]| parse(s, r).unwrap_err();
        assert!(err("i,j", &[1]).starts_with("more operands"));
        assert!(err("i", &[1, 1]).starts_with("fewer operands"));
        assert!(err("i%", &[2]).contains("invalid subscript '%'"));
        assert!(err("ij->k", &[2]).contains("output subscript 'k' which never"));
        assert!(err("i->ii", &[1]).contains("'i' multiple times"));
        assert!(err("ij", &[1]).contains("too many subscripts for operand 0"));
        assert!(err("ij", &[3]).starts_with("operand has more dimensions"));
        assert!(err("i-", &[1]).contains("proper '->'"));
        assert!(err("..i", &[1]).contains("not part of an ellipsis"));
        assert!(err("...->", &[2]).starts_with("output has more dimensions"));
    }

    #[test]
    fn places_reverse_as_few_operands_as_they_can() {
        let ops = |v: &[&[u8]]| {
            v.iter()
                .map(|l| (l.to_vec(), Form::Array))
                .collect::<Vec<_>>()
        };
        let (p, r) = places(b"ik", b"j", &ops(&[b"ij", b"jk"])).unwrap();
        assert_eq!((p, r), (b"ijk".to_vec(), vec![false, false]));
        let (p, r) = places(b"ji", b"", &ops(&[b"ij"])).unwrap();
        assert_eq!((p, r), (b"ji".to_vec(), vec![true]));
    }
}

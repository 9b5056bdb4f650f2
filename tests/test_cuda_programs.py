"""The differential programs of tests/test_programs.py,
tests/test_int_types.py, tests/test_numpy_semantics.py, tests/test_bounds.py,
tests/test_generated_names.py, tests/test_float16.py,
tests/test_break_continue.py, tests/test_strided_slices.py,
tests/test_generators.py, tests/test_keywords.py,
tests/test_array_expressions.py, tests/test_axis.py, tests/test_assert.py,
tests/test_cumulative.py, tests/test_matmul.py, tests/test_local_arrays.py,
tests/test_ufuncs.py, tests/test_array_methods.py and
tests/test_nan_reductions.py (and the modules imported below) on the Cuda
backend.

Every `test_*` of those modules is re-collected here with its parametrization,
with the module's `cpu_opts` and `run_both` swapped for Cuda versions while
it runs:

* on a machine with an NVIDIA GPU (`-m cuda`, scripts/gpu-check.sh), `run_both`
  runs the plain-Python reference and the JIT function on the Cuda backend,
  then the `print_compiled` file built by `compile_string` (nvcc) with the
  same arguments, and compares all three;
* without a GPU (every machine), the `_dry` variant runs the whole Cuda miss
  path except the GPU for each call: compile for Cuda, NVRTC the device code
  to an sm_90 cubin, build the launch plan (skipped without the NVRTC wheel
  off Linux, like tests/test_cuda_runtime.py);
* with `PARPY_TEST_EMULATED_GPU=1` (conftest; scripts/test.sh and CI run
  `-m cuda` so), the `_cuda` variants run on the CUDA emulator: the Cuda
  backend's call path with its kernels on the CPU (`parpy._cuda_emu`),
  compared with the plain-Python reference.

The modules themselves are not edited.
"""

import functools
import os
import sys

import numpy as np
import pytest

import conftest
import parpy
from parpy import _cuda, _native, _pymode
import test_atomics as ta
import test_bounds as tb
import test_break_continue as tj
import test_float16 as tf
import test_generated_names as tg
import test_int_types as ti
import test_numpy_semantics as tn
import test_programs as tp
import test_strided_slices as ts
import test_generators as tx
import test_keywords as tk
import test_array_expressions as tv
import test_axis as tz
import test_assert as tq
import test_cumulative as tw
import test_matmul as tm
import test_local_arrays as tl
import test_ufuncs as tu
import test_array_methods as tam
import test_nan_reductions as tnr
import test_flip as tfl
import test_diagonal as tdg
import test_roll as trl
import test_computed_elements as tce
import test_median as tmd
import test_windows as twn
import test_sort as tso
import test_quantile as tqt
import test_ufunc_methods as tum
import test_interp as tip
import test_trapezoid as ttz
import test_arange as tar
import test_local_copies as tlc
import test_masks as tms
import test_lists as tls
import test_fills as tfi
import test_stored_arrays as tsa
import test_reshape as trs
import test_array_attributes as tat
import test_eye as tey
import test_stack as tst
import test_polyval as tpv
import test_reduction_dtype as trd
import test_permute as tpm
import test_membership as tmb
import test_unbound as tub
import test_named_views as tnv
import test_runtime_slices as trt
import test_convolve as tcv
import test_none_args as tna
import test_unravel as tur
import test_bitwise_count as tbc
import test_idioms as tid
import test_einsum as tes
import test_keyed_search as tks
import test_ufunc_folds as tuf
import test_fsum as tfs
import test_isin as tii
import test_cov as tcov
import test_digitize as tdz
import test_float_parts as tfp
import test_starred as tsr
import test_gradient as tgr
import test_array_equal as tae
import test_histogram as thg
import test_pad as tpd

HAS_GPU = parpy.backend.is_enabled(parpy.CompileBackend.Cuda)
HAS_NVRTC = _cuda.nvrtc_path() is not None


def cuda_opts(spec=None, **fields):
    opts = conftest.cpu_opts(spec, **fields)
    opts.backend = parpy.CompileBackend.Cuda
    return opts


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_three(fn, args, opts, rtol=None, atol=None):
    """Reference vs JIT on Cuda (conftest.run_both), then print_compiled +
    compile_string (nvcc) on fresh copies, compared with the JIT results."""
    jit_out = conftest.run_both(fn, args, opts, rtol=rtol, atol=atol)
    if os.environ.get("PARPY_TEST_NO_NVCC") == "1":  # scripts/gpu-check.sh without nvcc
        return jit_out
    code = parpy.print_compiled(fn, _copies(args), opts)
    built = parpy.compile_string(fn.__name__, code, opts)
    nvcc_out = _copies(args)
    built(*nvcc_out)
    for k, (a, b) in enumerate(zip(jit_out, nvcc_out)):
        if isinstance(a, np.ndarray):
            tol = conftest.tolerances(a.dtype)
            if rtol is not None:
                tol["rtol"] = rtol
            if atol is not None:
                tol["atol"] = atol
            np.testing.assert_allclose(
                b, a, err_msg=f"argument {k} of {fn.__name__}: compile_string vs JIT", **tol)
    return jit_out


def dry_run(fn, args, opts, rtol=None, atol=None):
    """No GPU: the Cuda miss path up to the cubin and the launch plan. Returns
    the plain-Python results, so the checks that follow in the test still
    hold (they check the reference, not the GPU, here)."""
    names, launches, size = _native._cuda_dry_run(fn, _copies(args), opts, 90)
    assert len(names) == len(launches) and size > 0
    ref = _copies(args)
    _pymode.run(fn, ref)
    return ref


# The CPU programs whose host code touches arrays (REFERENCE.md: on a GPU
# backend such programs are rejected); any other program rejected that way is
# a failure, not a skip.
HOST_TOUCHES_DEVICE = frozenset({
    "test_negative_step",
    "test_sequential_2d_stencil_nested_subscripts",
    "test_slice_1d_with_bounds",
    "test_sequential_use_and_plain_python",  # test_atomics: atomics in host code
    # test_break_continue: sequential functions
    "test_sequential_function",
    "test_break_before_an_out_of_range_index_is_no_error",
    "test_the_same_loop_runs_sequentially",
    "test_a_heap_temporary_is_freed_at_continue",
})


# programs whose per-thread temporaries exceed a CUDA thread's 512 KiB of
# local memory (8 MiB rows copied for an overlapping slice assignment): a
# compile error on Cuda, tested below
TOO_BIG_FOR_A_THREAD = frozenset({"test_large_overlap_temporaries_are_not_on_the_stack"})


def test_a_thread_array_over_local_memory_is_refused():
    n = 1 << 21
    x = np.arange(n, dtype=np.float64).reshape(2, n // 2)
    opts = cuda_opts({'N': parpy.threads(2)})
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(tn.par_row_shift, [x, 2], opts)
    msg = str(e.value)
    assert "`x_rhs` takes 8.0 MiB per thread, more than the local memory of a CUDA thread " \
           "(512 KiB)" in msg, msg
    assert "overlapping slice assignment" in msg and "a bug in parpy" not in msg
    # 64 Ki doubles (512 KiB) still fit
    small = np.arange(2 * 65537, dtype=np.float64).reshape(2, 65537)
    assert "x_rhs[65536]" in parpy.print_compiled(tn.par_row_shift, [small, 2], opts)


def dry_call(fn, args, opts):
    """No GPU: test_bounds's `call` compiles to the cubin and runs nothing."""
    _native._cuda_dry_run(fn, args, opts, 90)
    return False


def dry_expect_index_error(fn, args, opts, *words):
    """No GPU: the failing call of a test_bounds test compiles, with a
    run-time check in the device code."""
    dry_call(fn, args, opts)
    assert "parpy_check_" in parpy.print_compiled(fn, args, opts)


def dry_expect_assertion(fn, args, opts, *words):
    """No GPU: the failing call of a test_assert test compiles, with the
    assertion's check in the device or host code."""
    dry_call(fn, args, opts)
    assert "// parpy-bounds: assertion: " in parpy.print_compiled(fn, args, opts)


def dry_expect_raised(fn, args, opts, exception, *words):
    """No GPU: the failing call of a test_assert `raise` test compiles,
    with the check of its `raise` in the device or host code (its message
    plain or naming values)."""
    dry_call(fn, args, opts)
    code = parpy.print_compiled(fn, args, opts)
    name = exception.__name__
    assert f"// parpy-bounds: raise {name}: " in code or f"// parpy-bounds: format {name} " in code


def dry_expect_same_message(fn, args, opts, exception):
    """No GPU: the failing call of a test_assert f-string (`str.format`,
    `%`) message test compiles, with the check naming its values in the
    device or host code."""
    dry_call(fn, args, opts)
    code = parpy.print_compiled(fn, args, opts)
    name = exception.__name__
    assert f"// parpy-bounds: format {name} " in code or f"// parpy-bounds: printf {name} " in code


def _swap(f, run, mod):
    dry = run is dry_run
    # test_bounds's and test_assert's helpers: run on the GPU, or only
    # compiled
    extra = {"call": dry_call, "expect_index_error": dry_expect_index_error,
             "expect_assertion": dry_expect_assertion,
             "expect_raised": dry_expect_raised,
             "expect_same_message": dry_expect_same_message} if dry else {}
    extra = {k: v for k, v in extra.items() if hasattr(mod, k)}

    # (a module that compares with NumPy itself has no `run_both`)
    extra["cpu_opts"] = cuda_opts
    if hasattr(mod, "run_both"):
        extra["run_both"] = run

    @functools.wraps(f)
    def wrapper(*a, **k):
        saved_extra = {k: getattr(mod, k) for k in extra}
        for name, v in extra.items():
            setattr(mod, name, v)
        try:
            return f(*a, **k)
        except parpy.CompileError as e:
            host = ("from host code (backend Cuda)" in str(e)
                    or "does not contain any parallelism, so on the Cuda backend" in str(e))
            if f.__name__ in HOST_TOUCHES_DEVICE and host:
                pytest.skip("not a Cuda program: " + str(e).splitlines()[0])
            if "parpy.atomic" in str(e) and "not supported by the Cuda backend" in str(e):
                pytest.skip("an element type Cuda has no atomics for")
            if f.__name__ in TOO_BIG_FOR_A_THREAD and "local memory of a CUDA thread" in str(e):
                pytest.skip("a per-thread array larger than CUDA's local memory: "
                            "test_a_thread_array_over_local_memory_is_refused")
            raise
        finally:
            for name, v in saved_extra.items():
                setattr(mod, name, v)
    return wrapper


_gpu_marks = [pytest.mark.cuda,
              pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (scripts/gpu-check.sh)")]
_dry_marks = [pytest.mark.skipif(not HAS_NVRTC and not sys.platform.startswith("linux"),
                                 reason="the nvidia-cuda-nvrtc wheel exists for Linux only")]

# tests that are not differential runs (error checks, other backends) stay
# in their own module
_NOT_DIFFERENTIAL = frozenset({
    # stop 53: compile errors on Cpu
    "test_an_unsupported_attribute_indexed_names_the_attribute",
    # stop 52: direct calls, Python mode, compile errors, programs without
    # parallelism (host code on Cuda)
    # (Cpu only: a GPU kernel's loop still runs to its end, 2**62 steps)
    "test_a_loop_whose_bounds_run_past_an_array_stops_at_the_failure",
    # (Cpu only, in a process of their own)
    "test_a_uint64_loop_bound_past_int64_is_checked_in_front_of_the_loop",
    "test_indices_monotone_in_the_counter_are_checked_in_front_of_the_loop",
    # (direct calls on Cpu, both specializations)
    "test_a_row_view_at_a_specialized_negative_index_reports_that_index",
    "test_a_nested_list_says_so_and_its_fixes_compile",
    "test_a_product_of_a_named_product_points_at_the_use",
    "test_a_local_tuple_of_python_floats_rebound_to_float64_values",
    "test_a_local_tuple_rebound_to_another_type_says_tuple_and_the_types",
    "test_a_negative_python_int_accumulator_of_uint64_is_refused_as_numpy_raises",
    "test_a_python_int_accumulator_of_numpy_integers_takes_their_type",
    "test_a_python_int_stored_into_a_bool_is_its_truth",
    "test_a_tuple_of_tuples_global_or_local_says_the_same",
    "test_an_array_of_a_list_rebound_to_another_of_its_type",
    "test_an_indexed_list_comprehension_is_named_with_a_fix_that_compiles",
    "test_builtin_maximum_is_numpys_maximum",
    "test_math_trunc_of_a_numpy_value_other_than_float64_is_refused",
    "test_math_trunc_of_float64_and_python_numbers_works",
    "test_numpy_functions_of_python_numbers_give_numpy_values",
    "test_python_mode_max_of_python_floats_is_pythons",
    "test_the_elements_of_an_array_of_python_floats_are_float64_values",
    "test_unary_plus_of_a_numpy_bool_is_refused",
    "test_np_where_of_a_python_int_the_type_cannot_hold_is_an_error",
    "test_an_early_return_of_host_code_compiles_as_printed",
    "test_an_unsupported_dtype_names_the_argument",
    "test_a_python_int_argument_beyond_the_forced_int_size_names_the_argument",
    "test_an_unspecialized_python_int_beyond_the_forced_int_size_is_an_overflow_error",
    "test_compile_string_checks_an_int32_parameter_of_the_printed_code",
    "test_metal_reduces_8_bit_values_in_parallel",
    "test_a_negated_uint64_scalar_known_when_compiling_wraps_as_numpy_does",
    "test_constant_division_by_zero_is_a_compile_error",
    "test_a_python_int_beyond_the_numpy_type_is_numpys_overflow_error",
    "test_a_python_float_converted_to_an_integer_raises_as_python_does",
    "test_a_float_converts_to_an_integer_as_numpy_does",
    "test_a_conversion_folded_when_compiling_is_the_same",
    "test_python_arithmetic_that_python_refuses_is_a_located_error",
    "test_np_clip_by_a_python_int_past_the_other_side_raises_as_numpy_does",
    "test_np_inner_of_matrices_or_by_name_is_an_error",
    "test_matmul_of_a_number_is_numpys_error",
    "test_mismatched_core_dimensions_are_numpys_error",
    "test_a_run_time_index_out_of_a_computed_array_raises_index_error",
    "test_changing_a_local_tuple_is_pythons_error",
    "test_a_computed_array_passed_to_a_helper_compiles_for_cuda_and_metal",
    "test_cuda_code_uses_half_and_computes_math_in_float",
    # test_keywords / test_int_types: direct calls and compile errors
    "test_keyword_only_parameters",
    "test_a_keyword_only_parameter_of_a_helper_given_by_position_is_an_error",
    "test_a_python_float_stored_into_integers_is_numpys_int",
    "test_a_python_float_known_when_compiling_is_checked_when_compiling",
    "test_a_python_int_past_int64_stored_into_floats_keeps_its_value",
    "test_a_range_bound_past_int64_is_an_error_not_zero_trips",
    "test_a_python_math_result_stored_into_integers_is_numpys_int",
    # test_generated_names: symbol tables and other backends' code
    "test_the_entry_is_the_only_exported_symbol",
    "test_cuda_code_of_clashing_names_compiles_with_nvrtc",
    "test_cuda_file_of_clashing_names_compiles_with_nvcc",
    "test_metal_code_of_clashing_names_passes_clang",
    "test_clashing_names_are_renamed_in_the_code",
    # test_atomics: errors, other backends' code, direct calls
    "test_misuse_is_a_located_error",
    "test_element_types_per_backend",
    "test_cuda_atomics_compile",
    "test_metal_atomics_parse",
    "test_atomic_block_holds_only_updates",
    "test_the_plain_update_is_still_a_race_and_the_fix_is_named",
    "test_a_checked_index_inside_the_value_compiles_for_cuda",
    # test_strided_slices: errors, other backends' code
    "test_a_zero_step_or_one_not_known_when_compiling_is_an_error",
    "test_strided_slices_compile_for_cuda_and_metal",
    "test_a_local_assigned_twice_is_not_a_compile_time_value",
    # test_generators: errors, other backends' code
    "test_what_cannot_be_compiled_is_a_located_error",
    "test_a_max_over_a_range_known_only_at_run_time_is_an_error",
    "test_generators_compile_for_cuda_and_metal",
    "test_atomic_index_is_bounds_checked",
    "test_a_checked_index_inside_the_value",
    # test_break_continue: errors, a direct call, Cuda code
    "test_registers_are_loaded_when_continue_skips_the_store",
    "test_the_cuda_host_copies_the_condition_back_before_continue",
    "test_an_index_reached_after_no_break_is_still_checked",
    "test_break_in_a_parallel_loop_is_an_error",
    "test_return_in_a_parallel_loop_is_an_error",
    "test_return_out_of_a_gpu_block_that_code_follows_is_an_error",
    "test_break_in_a_par_reduction_loop_is_an_error",
    "test_continue_in_a_par_reduction_loop_suggests_the_identity",
    "test_break_out_of_a_gpu_block_is_an_error",
    # test_keywords: the binding (direct calls), errors, other backends' code
    "test_call_errors_name_the_parameter",
    "test_call_by_name_and_defaults",
    "test_defaults_are_read_at_each_call",
    "test_a_call_by_name_reuses_the_specialization",
    "test_a_non_literal_default_must_be_passed_in_jit_code",
    # test_array_expressions: errors, other backends' code
    "test_what_a_view_cannot_be_is_a_located_error",
    "test_an_element_passed_to_a_helper_is_not_a_write",
    "test_array_expressions_compile_for_cuda_and_metal",
    "test_keywords_compile_for_cuda_and_metal",
    # test_axis: errors, other backends' code
    "test_what_an_axis_cannot_be_is_a_located_error",
    "test_axis_reductions_compile_for_cuda_and_metal",
    # test_assert: other backends' code, the Cpu's printed code, an error
    "test_asserts_compile_for_cuda_and_metal",
    "test_printed_code_run_by_compile_string_raises_too",
    "test_printed_cuda_code_on_the_emulator_raises_too",
    "test_printed_cuda_code_with_an_f_string_message_on_the_emulator",
    "test_f_string_messages_compile_for_cuda_and_metal",
    "test_format_and_percent_messages_compile_for_cuda_and_metal",
    # (test_idioms: direct calls and compile errors on Cpu)
    "test_an_initial_python_int_the_type_cannot_hold_is_numpys_overflow_error",
    "test_what_a_message_may_not_be",
    "test_printed_code_with_an_f_string_message_run_by_compile_string",
    "test_a_format_python_cannot_apply_raises_pythons_error",
    "test_a_percent_conversion_python_cannot_apply_raises_pythons_error",
    "test_printed_code_with_a_percent_message_run_by_compile_string",
    "test_what_a_format_or_percent_message_may_not_be",
    "test_a_message_keeps_its_line_ends_and_generated_comments_escape_it",
    # test_cumulative: other backends' code, errors
    "test_scans_compile_for_cuda_and_metal",
    "test_what_a_scan_cannot_be_is_a_located_error",
    # test_matmul: other backends' code, errors
    "test_matrix_products_compile_for_cuda_and_metal",
    "test_what_a_matrix_product_cannot_be_is_a_located_error",
    # test_local_arrays: other backends' code, errors
    "test_local_arrays_compile_for_cuda_and_metal",
    "test_what_a_local_array_cannot_be_is_a_located_error",
    # (host code on Cuda)
    "test_a_name_assigned_two_arrays_holds_each_in_turn",
    # test_ufuncs, test_array_methods: other backends' code
    "test_gpu_code_of_binary_ufuncs_compiles",
    "test_gpu_code_of_unary_ufuncs_compiles",
    "test_logaddexp_on_gpus",
    "test_float16_predicates_compile_for_gpus",
    "test_the_truth_of_a_float16_is_numpys_on_every_backend",
    "test_gpu_code_of_methods_compiles",
    "test_what_item_refuses_is_numpys_error",
    "test_nan_reductions_compile_for_cuda_and_metal",
    "test_nanargmax_of_all_nan_is_numpys_value_error",
    "test_nanargmax_compiles_for_cuda_and_metal",
    # test_diagonal: other backends' code, errors
    "test_diagonals_compile_for_cuda_and_metal",
    "test_misuse_is_refused_as_numpy_refuses_it",
    # test_roll: the Cpu's code, other backends' code, errors
    "test_a_roll_indexes_without_a_check",
    "test_misuse_of_roll_and_cross_is_refused",
    "test_a_shift_must_be_known_when_compiling",
    "test_rolls_and_crosses_compile_for_cuda_and_metal",
    # test_computed_elements: other backends' code, errors
    "test_an_index_that_cannot_be_checked_is_refused",
    "test_elements_compile_for_cuda_and_metal",
    # test_median: other backends' code, errors
    "test_what_a_median_cannot_be_is_refused",
    "test_medians_compile_for_cuda_and_metal",
    # test_windows: other backends' code, errors
    "test_a_window_that_may_leave_the_array_is_refused",
    "test_windows_compile_for_cuda_and_metal",
    # test_sort, test_quantile: errors, other backends' code, functions
    # without parallelism
    "test_misuse_is_refused_at_the_line",
    "test_sorts_compile_for_cuda_and_metal",
    "test_quantiles_compile_for_cuda_and_metal",
    "test_numpys_quirks_at_the_top",
    "test_q_may_be_a_scalar_argument",
    "test_interpolation_compiles_for_cuda_and_metal_refuses_its_float64",
    "test_other_ufunc_methods_are_refused_by_name",
    "test_misuse_is_refused_at_the_call",
    "test_a_computed_array_is_refused_with_what_to_write",
    "test_misuse_is_refused_with_what_to_write",
    # test_local_copies: errors
    "test_what_a_local_copy_cannot_be_is_a_located_error",
    "test_a_copy_larger_than_a_local_array_may_be_says_so",
    "test_a_local_array_shared_by_a_level_is_block_memory_in_gpu_code",
    # test_masks: errors
    "test_what_a_masked_store_cannot_be_is_a_located_error",
    # test_lists: errors
    "test_what_a_list_cannot_be_is_a_located_error",
    "test_sum_of_an_empty_list_is_pythons_0",
    "test_what_python_reads_as_items_of_other_types_is_a_located_error",
    # test_fills: errors
    "test_what_a_fill_cannot_be_is_a_located_error",
    # test_stored_arrays: errors
    "test_what_a_concatenation_cannot_be_is_a_located_error",
    # test_reshape: errors
    "test_what_a_reshape_cannot_be_is_a_located_error",
    # test_array_attributes: errors; host code without labels
    "test_shape_of_a_slice_takes_a_constant_index",
    "test_dtype_comparisons_itemsize_and_nbytes_are_known_when_compiling",
    # test_eye, test_stack: errors
    "test_what_a_triangle_cannot_be_is_a_located_error",
    "test_what_a_stack_cannot_be_is_a_located_error",
    # test_polyval: errors
    "test_polyval_takes_1d_coefficients",
    # test_reduction_dtype: errors
    "test_what_a_dtype_cannot_be_is_a_located_error",
    # test_permute: errors
    "test_what_parpy_cannot_view_is_a_located_error",
    # test_membership: errors
    "test_what_in_cannot_test_is_a_located_error",
    "test_an_in_chained_with_comparisons_is_refused_at_decoration",
    # test_unbound: host loops over arrays, an error, the C code
    "test_a_local_no_path_assigned_raises_unbound_local_error",
    "test_a_local_keeps_the_value_an_earlier_iteration_assigned",
    "test_a_loop_that_runs_zero_times_assigns_nothing",
    "test_a_read_before_the_assignment_further_down_the_loop",
    "test_a_local_assigned_before_a_break",
    "test_a_read_under_and_is_not_checked_where_python_does_not_evaluate_it",
    "test_a_loop_variable_after_a_loop_of_unknown_trips_or_with_break",
    "test_a_loop_variable_after_an_inner_loop_over_the_same_name",
    "test_after_a_labelled_loop_over_a_local_the_name_holds_the_last_value",
    # test_lists: host statements over arrays
    "test_a_tuple_stored_into_a_slice_is_the_sequence_of_its_items",
    "test_a_read_before_any_assignment_outside_loops_is_a_compile_error",
    "test_a_local_every_path_assigns_has_no_flag",
    "test_a_value_carried_across_iterations_is_declared_outside_the_loop",
    # host loops over arrays (sequential functions), direct calls
    "test_a_local_read_under_the_condition_that_assigned_it",
    "test_a_loop_variable_after_a_loop_known_to_run_zero_times",
    "test_a_negative_shift_count_of_python_ints_raises_as_python_does",
    "test_a_python_float_local_holding_numpy_floats_stored_into_integers",
    "test_positional_only_parameters",
    # direct calls and run-time errors
    "test_np_clip_by_a_python_int_argument_beyond_the_type_as_numpy_does",
    # compile errors
    "test_python_ints_known_when_compiling_are_exact_as_literals",
    # test_programs: an error
    "test_par_reduction_of_python_max_with_the_element_first_is_refused_for_floats",
    "test_a_python_int_argument_past_2_63_is_its_literal_when_specialized",
    # test_named_views: an error; host code reading what it writes
    "test_a_store_into_a_diagonal_is_an_error_as_numpys_read_only_view",
    "test_a_run_time_index_of_a_reshaped_view_is_checked",
    "test_a_view_name_bound_to_two_arrays_and_written_is_refused",
    "test_a_slice_of_a_named_reshaped_view_is_refused_not_copied",
    # test_convolve: compile errors, other backends' code
    "test_errors",
    "test_a_name_bound_to_a_convolution_is_no_store",
    "test_gpu_code_compiles",
    # test_runtime_slices: errors
    "test_what_a_run_time_slice_cannot_be_is_a_located_error",
    "test_run_time_slices_compile_for_cuda_and_metal",
    "test_a_store_through_a_named_run_time_window_is_a_located_error",
    "test_var_of_a_run_time_block_along_an_axis_is_a_located_error",
    # test_none_args: Cpu calls, errors, other backends' code
    "test_one_function_compiled_for_none_and_for_an_array",
    "test_what_none_cannot_be_is_a_located_error",
    "test_none_code_compiles_for_cuda_and_metal",
    # test_unravel: errors, other backends' code
    "test_what_unravel_cannot_take_is_a_located_error",
    "test_unravel_compiles_for_cuda_and_metal",
    # test_bitwise_count: an error, other backends' code
    "test_bitwise_count_of_floats_is_a_type_error",
    "test_bitwise_count_compiles_for_cuda_and_metal",
    # test_idioms: errors, other backends' code
    "test_what_an_idiom_cannot_be_is_a_located_error",
    "test_idioms_compile_for_cuda_and_metal",
    "test_run_time_stores_compile_for_cuda_and_metal",
    # test_einsum: errors, other backends' code
    "test_numpy_value_errors_are_located_compile_errors",
    "test_optimize_takes_numpys_choices_only",
    "test_subscripts_other_than_a_literal_are_refused",
    "test_einsum_compiles_for_cuda_and_metal",
    # test_keyed_search: errors, other backends' code
    "test_what_a_keyed_search_cannot_be_is_a_located_error",
    "test_what_a_key_function_cannot_be_is_a_located_error",
    "test_keyed_searches_compile_for_cuda_and_metal",
    "test_a_slice_of_run_time_bounds_is_a_located_error",
    # test_ufunc_folds: errors, other backends' code
    "test_an_empty_reduction_without_identity_raises_numpys_error",
    "test_a_labelled_fold_is_refused",
    "test_a_comparison_of_numbers_has_no_fold",
    "test_several_axes_of_a_non_reorderable_ufunc_are_refused",
    "test_folds_that_are_no_plain_fold_in_numpy_are_refused",
    "test_a_labelled_scan_of_a_row_is_refused",
    "test_gpu_code_of_folds_compiles",
    # test_fsum: an error, other backends' code
    "test_fsum_of_a_2d_array_is_a_located_error",
    "test_fsum_compiles_for_cuda",
    "test_fsum_on_metal_is_a_located_float64_error",
    # test_isin: errors, other backends' code
    "test_what_isin_refuses_is_a_located_error",
    "test_isin_compiles_for_cuda_and_metal",
    # test_cov: errors, other backends' code
    "test_what_cov_cannot_take_is_a_located_error",
    "test_cov_compiles_for_cuda_and_metal",
    # test_digitize: direct calls, errors, Cpu code, other backends' code
    # (its differential test of rows runs on the GPU)
    "test_digitize_is_numpys",
    "test_digitize_of_integers_is_numpys",
    "test_bins_out_of_order_raise_numpys_value_error",
    "test_what_digitize_refuses_is_a_located_error",
    "test_digitize_compiles_for_cuda_and_metal",
    "test_digitize_of_a_whole_array_is_numpys",
    "test_bins_out_of_order_raise_once_a_call_even_for_no_elements",
    "test_elementwise_digitize_compiles_for_cuda_and_metal",
    # test_float_parts, test_starred: errors, other backends' code, a
    # check of the printed Cpu code
    "test_frexp_not_unpacked_says_to_unpack_it",
    "test_frexp_generates_gpu_code",
    "test_a_starred_number_is_pythons_type_error",
    "test_a_starred_array_too_long_to_spell_out_is_refused",
    "test_python_max_of_many_floats_is_linear_code",
    "test_a_starred_value_parpy_cannot_spread_says_what_it_spreads",
    # test_gradient: errors, a direct call, other backends' code
    "test_what_gradient_refuses_is_a_located_error",
    "test_a_numpy_spacing_computes_in_its_type_and_stores_in_fs",
    "test_gradient_compiles_for_cuda_and_metal",
    # test_array_equal: an error, other backends' code
    "test_equal_nan_must_be_known_when_compiling",
    "test_array_equal_compiles_for_cuda_and_metal",
    # test_histogram: direct calls, errors, other backends' code
    # (its differential test of rows runs on the GPU)
    "test_random_rows_are_numpys",
    "test_empty_and_2d_inputs_are_numpys",
    "test_bad_ranges_raise_numpys_value_error",
    "test_what_histogram_refuses_is_a_located_error",
    "test_histogram_compiles_for_cuda_and_metal",
    "test_float32_data_with_ranges_of_other_types_is_numpys",
    "test_weighted_counts_are_numpys",
    # test_pad: errors, other backends' code
    "test_what_pad_cannot_do_is_a_located_error",
    "test_a_width_must_be_known_when_compiling",
    "test_pads_compile_for_cuda_and_metal",
})

for _mod in (tp, ti, tn, tb, tg, ta, tf, tj, ts, tx, tk, tv, tz, tq, tw, tm, tl, tu, tam, tnr, tfl, tdg, trl, tce, tmd, twn,
             tso, tqt, tum, tip, ttz, tar, tlc, tms, tls, tfi, tsa, trs,
             tat, tey, tst, tpv, trd, tpm, tmb, tub, tnv, trt, tcv, tna, tur, tbc, tid, tes, tks, tuf, tfs, tii, tcov, tdz, tfp, tsr, tgr, tae, thg, tpd):
    for _name, _f in sorted(vars(_mod).items()):
        if not (_name.startswith("test_") and callable(_f)) or _name in _NOT_DIFFERENTIAL:
            continue
        assert _name + "_cuda" not in globals(), f"two modules define {_name}"
        _g = _swap(_f, run_three, _mod)
        for _m in _gpu_marks:
            _g = _m(_g)
        globals()[_name + "_cuda"] = _g
        _d = _swap(_f, dry_run, _mod)
        for _m in _dry_marks:
            _d = _m(_d)
        globals()[_name + "_dry"] = _d

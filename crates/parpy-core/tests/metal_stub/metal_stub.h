// A stub of the Metal standard library, for tests only: it lets clang parse
// the Metal Shading Language that parpy generates as C++17, so that the
// generated files are syntax- and type-checked on machines without Xcode.
//
//   clang-19 -x c++ -std=c++17 -fsyntax-only -Wno-unknown-attributes -Werror \
//       -I tests/metal_stub -include tests/metal_stub/metal_stub.h FILE.metal
//
// It declares only what parpy's Metal output uses (address spaces, scalar and
// vector types, barriers, SIMD-group functions, math functions), with the
// signatures of the Metal standard library, so a kernel that calls something
// else, or calls these with the wrong arguments, fails the check. Attributes
// such as [[kernel]] and [[buffer(0)]] are left to clang, which ignores
// unknown attributes (the warning is silenced by -Wno-unknown-attributes).
//
// Metal has no 64-bit floating point type: `double` is poisoned at the end,
// so any use of it in a generated file is an error.
#ifndef PARPY_METAL_STUB_H
#define PARPY_METAL_STUB_H

// Address-space qualifiers: no meaning to the C++ type checker.
#define device
#define constant
#define threadgroup
#define thread

// Scalar type names of Metal.
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef unsigned long size_t;

// Vector types (clang's extended vectors give .x/.y/.z like Metal's).
typedef uint uint2 __attribute__((ext_vector_type(2)));
typedef uint uint3 __attribute__((ext_vector_type(3)));
typedef ushort ushort2 __attribute__((ext_vector_type(2)));
typedef ushort ushort3 __attribute__((ext_vector_type(3)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int int3 __attribute__((ext_vector_type(3)));
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float3 __attribute__((ext_vector_type(3)));
typedef float float4 __attribute__((ext_vector_type(4)));

// Constants of metal_math and metal_integer.
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 3.40282347e+38f
#define FLT_MAX 3.40282347e+38f
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 4294967295u
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1)

namespace metal {

// Barriers.
enum class mem_flags {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
};
void threadgroup_barrier(mem_flags flags);
void simdgroup_barrier(mem_flags flags);

// SIMD-group functions (Metal 2.1+ on Apple GPUs), for the scalar types
// parpy reduces over.
template <typename T> T simd_sum(T data);
template <typename T> T simd_product(T data);
template <typename T> T simd_max(T data);
template <typename T> T simd_min(T data);
template <typename T> T simd_broadcast(T data, ushort broadcast_lane_id);
template <typename T> T simd_broadcast_first(T data);
template <typename T> T simd_shuffle(T data, ushort simd_lane_id);
template <typename T> T simd_shuffle_down(T data, ushort delta);
template <typename T> T simd_shuffle_up(T data, ushort delta);
template <typename T> T simd_shuffle_xor(T data, ushort mask);

// Math functions: float and half overloads only (Metal has no double).
#define PARPY_STUB_MATH1(name)                                                 \
  float name(float x);                                                         \
  half name(half x);
#define PARPY_STUB_MATH2(name)                                                 \
  float name(float x, float y);                                                \
  half name(half x, half y);
PARPY_STUB_MATH1(sqrt)
PARPY_STUB_MATH1(rsqrt)
PARPY_STUB_MATH1(exp)
PARPY_STUB_MATH1(exp2)
PARPY_STUB_MATH1(log)
PARPY_STUB_MATH1(log2)
PARPY_STUB_MATH1(sin)
PARPY_STUB_MATH1(cos)
PARPY_STUB_MATH1(tan)
PARPY_STUB_MATH1(tanh)
PARPY_STUB_MATH1(log10)
PARPY_STUB_MATH1(asin)
PARPY_STUB_MATH1(acos)
PARPY_STUB_MATH1(atan)
PARPY_STUB_MATH1(sinh)
PARPY_STUB_MATH1(cosh)
PARPY_STUB_MATH1(asinh)
PARPY_STUB_MATH1(acosh)
PARPY_STUB_MATH1(atanh)
PARPY_STUB_MATH1(fabs)
PARPY_STUB_MATH1(floor)
PARPY_STUB_MATH1(ceil)
PARPY_STUB_MATH1(trunc)
PARPY_STUB_MATH1(round)
PARPY_STUB_MATH1(rint)
PARPY_STUB_MATH2(atan2)
PARPY_STUB_MATH2(pow)
PARPY_STUB_MATH2(powr)
PARPY_STUB_MATH2(fmod)
PARPY_STUB_MATH2(copysign)
PARPY_STUB_MATH2(fmax)
PARPY_STUB_MATH2(fmin)
float ldexp(float x, int k);
half ldexp(half x, int k);
#undef PARPY_STUB_MATH1
#undef PARPY_STUB_MATH2
bool isnan(float x);
bool isinf(float x);
bool isfinite(float x);
bool signbit(float x);

// Integer and generic functions of metal_integer / metal_common.
char abs(char x);
short abs(short x);
int abs(int x);
long abs(long x);
half abs(half x);
float abs(float x);
template <typename T> T max(T x, T y);
template <typename T> T min(T x, T y);
template <typename T> T clamp(T x, T minval, T maxval);
template <typename T> T select(T a, T b, bool c);

// Reinterpreting bits (same size).
template <typename T, typename U> T as_type(U x);

// Atomics of metal_atomic: the types parpy.atomic.* updates (atomic_float
// is MSL 3.0; max and min exist for the integer types only).
enum memory_order { memory_order_relaxed };
template <typename T> struct _atomic {
  T value;
};
typedef _atomic<int> atomic_int;
typedef _atomic<uint> atomic_uint;
typedef _atomic<float> atomic_float;
#define PARPY_STUB_ATOMIC(T)                                                   \
  T atomic_load_explicit(const device _atomic<T> *object, memory_order order); \
  T atomic_fetch_add_explicit(device _atomic<T> *object, T operand,            \
                              memory_order order);                             \
  bool atomic_compare_exchange_weak_explicit(                                  \
      device _atomic<T> *object, thread T *expected, T desired,                \
      memory_order succ, memory_order fail);
#define PARPY_STUB_ATOMIC_INT(T)                                               \
  T atomic_fetch_max_explicit(device _atomic<T> *object, T operand,            \
                              memory_order order);                             \
  T atomic_fetch_min_explicit(device _atomic<T> *object, T operand,            \
                              memory_order order);
PARPY_STUB_ATOMIC(int)
PARPY_STUB_ATOMIC(uint)
PARPY_STUB_ATOMIC(float)
PARPY_STUB_ATOMIC_INT(int)
PARPY_STUB_ATOMIC_INT(uint)
#undef PARPY_STUB_ATOMIC
#undef PARPY_STUB_ATOMIC_INT

} // namespace metal

// Metal has no 64-bit floating point type.
#pragma GCC poison double

#endif // PARPY_METAL_STUB_H

# A `break` inside `with parpy.gpu:` of a loop outside the block.
# args: x: f32[16]
import parpy


@parpy.jit
def step_until(x):
    for t in range(100):
        with parpy.gpu:
            x[0] = x[0] * 0.5
            if x[0] < 1.0:
                break

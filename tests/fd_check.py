"""Central finite differences in float64 of a scalar loss, checked against dumped gradients (the numpy tests)."""
import numpy as np


def worst_gradient_error(values, grads, loss, label, eps=1e-6, tolerance=1e-4):
    """For each name in values (arrays the loss() reads, perturbed in place element by element), the largest
    |finite difference - grads[name]| relative to the largest finite difference; asserts each below tolerance and
    returns the worst."""
    worst = 0.0
    for name, v in values.items():
        fd = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            saved = v[i]
            v[i] = saved + eps
            up = loss()
            v[i] = saved - eps
            down = loss()
            v[i] = saved
            fd[i] = (up - down) / (2 * eps)
        rel = np.abs(fd - grads[name]).max() / max(np.abs(fd).max(), 1e-30)
        assert rel < tolerance, (label, name, rel)
        worst = max(worst, rel)
    return worst

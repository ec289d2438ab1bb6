"""DP library APIs are matched by import-qualified name (``dpcheck.pipelines.apis``): vendored
copies are recognised by what they define, the one narrow fallback applies only to an undecided
object in a file importing the library, and accountant calls are linked by the principles of
``dpcheck.pipelines.accountants`` (reach through calls, hooks a library runs, no library
internals). Real projects, real parsing."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.accountants import AccountantFinder
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import find_usage
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project, pipelines_of

TF_COPY = '''
import math


def _sampled_rdp(q, sigma, alpha):
    return 2 * q * q * alpha / sigma ** 2


def compute_rdp(q, noise_multiplier, steps, orders):
    return [steps * _sampled_rdp(q, noise_multiplier, a) for a in orders]


def get_privacy_spent(orders, rdp, target_eps=None, target_delta=None):
    return min(r + math.log(1 / target_delta) / (a - 1) for a, r in zip(orders, rdp)), None


def search_sigma(q, steps, eps, delta):
    return min(s / 10 for s in range(5, 200)
               if get_privacy_spent([2, 4, 8], compute_rdp(q, s / 10, steps, [2, 4, 8]),
                                    target_delta=delta)[0] <= eps)
'''

OWN_RDP = '''
def compute_rdp(alpha, q, sigma):
    """The project's own formula, with its own arguments: not a copy of any library."""
    return alpha * q * q / sigma ** 2
'''

MOMENTS_COPY = '''
class AmortizedAccountant:
    def __init__(self, total_examples):
        self.total_examples = total_examples

    def accumulate_privacy_spending(self, eps_delta, unused_sigma, num_examples):
        self.spent = num_examples / self.total_examples
'''

USER = '''
from rdp_math import compute_rdp, get_privacy_spent, search_sigma
from own_rdp import compute_rdp as own_rdp
from moments import AmortizedAccountant


def main():
    sigma = search_sigma(0.01, 1000, 2.0, 1e-5)
    rdp = compute_rdp(0.01, sigma, 1000, [2, 4, 8])
    own = own_rdp(2, 0.01, sigma)
    tracker = AmortizedAccountant(60000)
    tracker.accumulate_privacy_spending(None, sigma, 600)
    return rdp, own, get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)
'''


def _index(tmp_path: Path, files: dict[str, str]) -> ProjectIndex:
    return ProjectIndex(make_project(tmp_path, files))


def test_a_module_defining_a_library_modules_functions_is_that_library(tmp_path: Path) -> None:
    index = _index(tmp_path, {"rdp_math.py": TF_COPY, "own_rdp.py": OWN_RDP,
                              "moments.py": MOMENTS_COPY, "train.py": USER})
    main = Ctx("train.py", "main")
    module = "tensorflow_privacy.privacy.analysis.rdp_accountant"
    assert index.library_name("compute_rdp", main) == f"{module}.compute_rdp"
    assert index.library_name("get_privacy_spent", main) == f"{module}.get_privacy_spent"
    # a function the project added to its copy stays project code
    assert index.library_name("search_sigma", main) is None
    # a same-named function with other parameters is the project's own
    assert index.library_name("own_rdp", main) is None
    assert index.library_name("tracker.accumulate_privacy_spending", main) == (
        "differential_privacy.privacy_accountant.tf.accountant.AmortizedAccountant"
        ".accumulate_privacy_spending")


def test_accountant_calls_inside_a_copied_api_are_not_the_users(tmp_path: Path) -> None:
    """The copy's compute_rdp calls its own per-order helper; the user's call is the one
    accounted (its steps 1000, not the copy's internal arguments)."""
    index = _index(tmp_path, {"rdp_math.py": TF_COPY, "train.py": '''
from rdp_math import compute_rdp


def main():
    return compute_rdp(0.01, 1.1, 1000, [2, 4, 8])
'''})
    scopes = [Ctx("train.py", "main"), Ctx("rdp_math.py", "compute_rdp"),
              Ctx("rdp_math.py", "_sampled_rdp")]
    [call] = AccountantFinder(index, None).find(scopes)
    assert (call.name, call.assumes, call.span.path) == ("tf-privacy-rdp", "SGM+poisson",
                                                         "train.py")
    assert call.args["steps"][1] == ["n", 1000]


def test_a_sensitivity_factor_on_a_full_rdp_is_not_a_step_count(tmp_path: Path) -> None:
    index = _index(tmp_path, {"rdp_math.py": TF_COPY, "train.py": '''
from rdp_math import compute_rdp


def main(steps=4000):
    return compute_rdp(0.01, 1.1, steps, [2, 4, 8]) * 2
'''})
    [call] = AccountantFinder(index, None).find([Ctx("train.py", "main")])
    assert call.args["steps"][1] == ["r", "steps"]


CALLBACK = '''
from opacus.accountants import RDPAccountant
from transformers import Trainer, TrainerCallback


class EpsilonCallback(TrainerCallback):
    def __init__(self, sigma, rate):
        self.sigma, self.rate = sigma, rate
        self.accountant = RDPAccountant()

    def on_step_end(self, args, state, control, **kwargs):
        self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.rate)


class NeverUsed:
    def __init__(self):
        self.accountant = RDPAccountant()

    def tick(self):
        self.accountant.step(noise_multiplier=0.5, sample_rate=0.5)


def main(model, data):
    trainer = Trainer(model=model, train_dataset=data,
                      callbacks=[EpsilonCallback(sigma=0.9, rate=0.002)])
    trainer.train()
'''


def test_a_callback_the_library_runs_is_linked_to_the_pipeline(tmp_path: Path) -> None:
    index = _index(tmp_path, {"train.py": CALLBACK})
    scopes = [Ctx("train.py", "main"), Ctx("train.py", "EpsilonCallback.__init__")]
    [call] = AccountantFinder(index, None).find(scopes)
    assert (call.name, call.assumes) == ("opacus-rdp", "SGM+poisson")
    # the constructor anchors it; sigma and q come from the step the library calls each step
    assert (call.span.line, call.sources["q"].line, call.sources["sigma"].line) == (8, 11, 11)
    assert call.args["q"][1] == ["r", "self.rate"]


def test_an_object_nothing_runs_links_no_accountant(tmp_path: Path) -> None:
    index = _index(tmp_path, {"train.py": CALLBACK.replace(
        "callbacks=[EpsilonCallback(sigma=0.9, rate=0.002)]", "callbacks=[]")})
    assert AccountantFinder(index, None).find([Ctx("train.py", "main")]) == []


ENGINE_PARAM = '''
{imports}


def privatize(engine, model, optimizer, loader):
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=1.0, max_grad_norm=1.0)
'''


def test_the_fallback_needs_an_undecided_object_and_the_librarys_import(tmp_path: Path) -> None:
    scope = [Ctx("setup.py", "privatize")]
    with_import = _index(tmp_path / "a", {"setup.py": ENGINE_PARAM.format(
        imports="import opacus  # the engine is built by the caller's framework")})
    assert find_usage(with_import, scope) is not None
    without = _index(tmp_path / "b", {"setup.py": ENGINE_PARAM.format(imports="import torch")})
    assert find_usage(without, scope) is None
    decided = _index(tmp_path / "c", {"setup.py": ENGINE_PARAM.format(imports="import opacus")
                                      + '''

class Wrapper:
    def make_private(self, **kwargs):
        return kwargs


def run():
    privatize(Wrapper(), None, None, None)
'''})
    assert find_usage(decided, scope) is None


def test_another_librarys_make_private_forms_no_opacus_pipeline(tmp_path: Path) -> None:
    files = {"requirements.txt": "opacus==1.4.0\njax-privacy==1.0.0\n", "train.py": '''
import keras
from jax_privacy import keras_api


def main():
    model = keras.Sequential([keras.layers.Dense(10)])
    params = keras_api.DPKerasConfig(epsilon=1.0, delta=1e-5, clipping_norm=1.0, batch_size=64,
                                     gradient_accumulation_steps=1, train_steps=100,
                                     train_size=60000)
    model = keras_api.make_private(model, params)
    model.fit(x=None, y=None, epochs=1, batch_size=64)


if __name__ == "__main__":
    main()
'''}
    assert pipelines_of(tmp_path, files) == []


def test_an_accountant_chosen_by_an_option_default_is_that_accountant(tmp_path: Path) -> None:
    index = _index(tmp_path, {"train.py": '''
import argparse
from opacus import PrivacyEngine

parser = argparse.ArgumentParser()
parser.add_argument("--accountant", default="gdp")
args = parser.parse_args()


def main():
    engine = PrivacyEngine(accountant=args.accountant)
    return engine.get_epsilon(1e-5)
'''})
    [call] = AccountantFinder(index, "opacus-prv").find([Ctx("train.py", "main")])
    assert call.name == "opacus-gdp"


def test_one_steps_rdp_summed_by_a_helper_counts_its_callers_loop(tmp_path: Path) -> None:
    """The RDP of one step at each order (the copy's private ``_compute_rdp``), added up by a
    training-step helper: the steps are the count of the loop that calls the helper."""
    copy = TF_COPY.replace("_sampled_rdp", "_compute_rdp")
    index = _index(tmp_path, {"rdp_math.py": copy, "train.py": '''
from rdp_math import _compute_rdp

Q, SIGMA, TOTAL = 0.01, 1.1, 800


def train_step(spent):
    step_rdp = [_compute_rdp(Q, SIGMA, order) for order in range(2, 64)]
    return [a + b for a, b in zip(spent, step_rdp)]


def main():
    spent = [0.0] * 62
    for t in range(1, TOTAL + 1):
        spent = train_step(spent)
    return spent
'''})
    [call] = AccountantFinder(index, None).find([Ctx("train.py", "main"),
                                                 Ctx("train.py", "train_step")])
    assert (call.name, call.role) == ("tf-privacy-rdp", "step")
    assert call.args["q"][1] == ["r", "Q"]
    steps = call.args["steps"][1]
    assert steps == ["b", "-", ["b", "+", ["r", "TOTAL"], ["n", 1]], ["n", 1]]

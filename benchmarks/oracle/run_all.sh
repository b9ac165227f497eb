#!/usr/bin/env bash
# Record every traced loop of the oracle's runs (see README.md). Needs /tmp/oracle-venv and the
# test suites under /tmp/oracle-src (README "Set-up"). Runs one stage at a time.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
MAIN="$(cd "$HERE/../.." && pwd)"
PY=${ORACLE_PY:-/tmp/oracle-venv/bin/python}
SRC=${ORACLE_SRC:-/tmp/oracle-src}
RUNS=${ORACLE_RUNS:-/tmp/oracle-runs}
SP=$($PY -c "import equinox, os; print(os.path.dirname(os.path.dirname(equinox.__file__)))")
VSP=$($PY -c "import numpyro, os; print(os.path.dirname(os.path.dirname(numpyro.__file__)))")
REC="$PY $HERE/record.py"
PYTEST="-m pytest -q -p no:cacheprovider -p no:randomly -o addopts= -W ignore --timeout 90 --continue-on-collection-errors"
only=${1:-all}
mkdir -p "$RUNS"

want() { [ "$only" = all ] || [ "$only" = "$1" ]; }

if want fixtures; then
  $REC --out "$RUNS/fixtures" --root fixtures="$MAIN/fixtures" --timeout 900 -- \
    $PY "$HERE/drive_fixtures.py" "$MAIN/fixtures" > "$RUNS/fixtures.log" 2>&1
fi
if want equinox; then
  $REC --out "$RUNS/equinox" --cwd "$SRC/equinox" --timeout 300 \
    --root equinox="$SRC/equinox/equinox" --root equinox-tests="$SRC/equinox/tests" --root jax="$SP/jax" -- \
    $PY $PYTEST tests --deselect tests/test_onnx.py --ignore tests/test_pmap.py > "$RUNS/equinox.log" 2>&1
fi
if want optax; then
  $REC --out "$RUNS/optax" --cwd "$SRC/optax" --timeout 300 \
    --root optax="$SRC/optax/optax" --root jax="$SP/jax" -- \
    $PY $PYTEST optax > "$RUNS/optax.log" 2>&1
fi
if want numpyro; then
  $REC --out "$RUNS/numpyro" --cwd "$SRC/numpyro" --timeout 300 \
    --root numpyro="$VSP/numpyro" --root numpyro-tests="$SRC/numpyro/test" \
    --root flax="$SP/flax" --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY $PYTEST test/contrib/test_module.py test/test_handlers.py test/test_flows.py \
      test/infer/test_autoguide.py test/test_transforms.py test/infer/test_hmc_gibbs.py > "$RUNS/numpyro.log" 2>&1
fi
if want diffrax; then
  $REC --out "$RUNS/diffrax" --cwd "$SRC/diffrax" --timeout 300 \
    --root diffrax="$SRC/diffrax/diffrax" --root diffrax-tests="$SRC/diffrax/test" \
    --root lineax="$VSP/lineax" --root optimistix="$VSP/optimistix" --root jax="$SP/jax" -- \
    $PY $PYTEST test > "$RUNS/diffrax.log" 2>&1
fi
if want distrax; then
  $REC --out "$RUNS/distrax" --cwd "$SRC/distrax" --timeout 240 \
    --root distrax="$SRC/distrax/distrax" --root chex="$VSP/chex" --root jax="$SP/jax" -- \
    $PY $PYTEST distrax > "$RUNS/distrax.log" 2>&1
fi
if want api; then
  $REC --out "$RUNS/api" --timeout 600 --root jax="$SP/jax" --root flax="$SP/flax" --root haiku="$SP/haiku" -- \
    $PY "$HERE/drive_api.py" 540 > "$RUNS/api.log" 2>&1
fi
if want libs; then
  PYTHONPATH="$SRC/optax:$SRC/equinox:$SRC/diffrax:$SRC/distrax" \
  $REC --out "$RUNS/libs" --timeout 540 --root optax="$SRC/optax/optax" --root equinox="$SRC/equinox/equinox" \
    --root diffrax="$SRC/diffrax/diffrax" --root distrax="$SRC/distrax/distrax" --root numpyro="$VSP/numpyro" \
    --root lineax="$VSP/lineax" --root optimistix="$VSP/optimistix" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_libs.py" 480 optax_sweep equinox_sweep distrax_sweep numpyro_sweep diffrax_sweep > "$RUNS/libs.log" 2>&1
  PYTHONPATH="$SRC/optax:$SRC/equinox:$SRC/diffrax:$SRC/distrax" \
  $REC --out "$RUNS/libs2" --timeout 420 --root flax="$SP/flax" --root blackjax="$VSP/blackjax" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_libs.py" 400 nnx_sweep jax_extras_sweep blackjax_sweep > "$RUNS/libs2.log" 2>&1
fi
if want haiku; then
  # haiku's own tests ship with the installed package (haiku/_src/*_test.py)
  $REC --out "$RUNS/haiku" --cwd "$SP" --timeout 420 --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY $PYTEST --timeout 60 haiku/_src/recurrent_test.py haiku/_src/layer_stack_test.py haiku/_src/stateful_test.py \
      haiku/_src/lift_test.py haiku/_src/pool_test.py haiku/_src/conv_test.py haiku/_src/attention_test.py \
      haiku/_src/batch_norm_test.py haiku/_src/moving_averages_test.py haiku/_src/spectral_norm_test.py \
      haiku/_src/multi_transform_test.py haiku/_src/nets haiku/_src/summarise_test.py haiku/_src/jaxpr_info_test.py \
      haiku/_src/embed_test.py haiku/_src/basic_test.py haiku/_src/depthwise_conv_test.py haiku/_src/reshape_test.py \
      haiku/_src/group_norm_test.py haiku/_src/layer_norm_test.py haiku/_src/mixed_precision_test.py \
      haiku/_src/random_test.py haiku/_src/transform_test.py haiku/_src/module_test.py haiku/_src/dot_test.py \
      haiku/_src/eval_shape_test.py haiku/_src/integration/jax_transforms_test.py \
      haiku/_src/integration/hk_transforms_test.py > "$RUNS/haiku.log" 2>&1
fi
if want numpyro-examples; then
  # numpyro's examples/ (from the same checkout as its tests), tiny settings, 100 s each
  $REC --out "$RUNS/numpyro-examples" --timeout 600 --root numpyro="$VSP/numpyro" \
    --root numpyro-examples="$SRC/numpyro/examples" --root flax="$SP/flax" --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_examples.py" "$SRC/numpyro/examples" 560 100 > "$RUNS/numpyro-examples.log" 2>&1
  # the scripts the first pass (name order, time-limited) did not reach
  $REC --out "$RUNS/numpyro-examples2" --timeout 330 --root numpyro="$VSP/numpyro" \
    --root numpyro-examples="$SRC/numpyro/examples" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_examples.py" "$SRC/numpyro/examples" 300 70 minipyro.py neutra.py proportion_test.py \
      sparse_regression.py thompson_sampling.py toy_mixture_model_discrete_enumeration.py var2.py \
      zero_inflated_poisson.py annotation.py > "$RUNS/numpyro-examples2.log" 2>&1
fi
if want jax; then
  # a wider drive of jax itself (drive_jax.py: every argument pattern, indexing, lax, transforms, scipy, random, experimental)
  $REC --out "$RUNS/jax" --timeout 720 --root jax="$SP/jax" -- \
    $PY "$HERE/drive_jax.py" 660 > "$RUNS/jax.log" 2>&1
fi
if want jaxopt; then
  # jaxopt 0.8.5's tests (checkout of tag jaxopt-v0.8.5; they import the installed jaxopt), the files
  # with the most loops, 30 s a file (not run for labels.jsonl: no time left)
  $REC --out "$RUNS/jaxopt" --cwd "$SRC/jaxopt" --timeout 260 \
    --root jaxopt="$VSP/jaxopt" --root jaxopt-tests="$SRC/jaxopt/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 240 30 tests/scipy_wrappers_test.py tests/common_test.py tests/projection_test.py \
      tests/lbfgs_test.py tests/zoom_linesearch_test.py tests/prox_test.py tests/base_test.py tests/armijo_sgd_test.py \
      tests/polyak_sgd_test.py tests/optax_wrapper_test.py tests/lbfgsb_test.py tests/loss_test.py > "$RUNS/jaxopt.log" 2>&1
fi
if want numpyro2; then
  # numpyro's other test files, one at a time, 25 s each (drive_pytest.py)
  $REC --out "$RUNS/numpyro2" --cwd "$SRC/numpyro" --timeout 330 \
    --root numpyro="$VSP/numpyro" --root numpyro-tests="$SRC/numpyro/test" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 310 25 test/contrib/test_control_flow.py test/contrib/test_infer_discrete.py \
      test/contrib/test_enum_elbo.py test/infer/test_reparam.py test/infer/test_hmc_util.py test/ops/test_indexing.py \
      test/test_distributions_util.py test/infer/test_infer_util.py test/infer/test_gradient.py test/test_optimizers.py \
      test/infer/test_ensemble_util.py test/infer/test_svi.py test/test_util.py test/test_distributions_mixture.py \
      test/contrib/hsgp test/contrib/einstein test/contrib/stochastic_support test/infer/test_mcmc.py \
      test/test_distributions.py test/infer/test_importance.py test/test_constraints.py > "$RUNS/numpyro2.log" 2>&1
fi
if want lineax; then
  # lineax 0.1.1 and optimistix 0.1.0 tests (checkouts of those tags); they import the installed packages
  $REC --out "$RUNS/lineax" --cwd "$SRC/lineax" --timeout 160 \
    --root lineax="$VSP/lineax" --root lineax-tests="$SRC/lineax/tests" --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY $PYTEST --timeout 45 tests > "$RUNS/lineax.log" 2>&1
  $REC --out "$RUNS/optimistix" --cwd "$SRC/optimistix" --timeout 160 \
    --root optimistix="$VSP/optimistix" --root optimistix-tests="$SRC/optimistix/tests" --root lineax="$VSP/lineax" \
    --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY $PYTEST --timeout 45 tests > "$RUNS/optimistix.log" 2>&1
fi
if want equinox2; then
  # every equinox and diffrax test file, 15 s each (the first stages ran the suites alphabetically;
  # for labels.jsonl this stage was stopped after 78 s, four equinox files, and diffrax2 did not run)
  $REC --out "$RUNS/equinox2" --cwd "$SRC/equinox" --timeout 260 \
    --root equinox="$SRC/equinox/equinox" --root equinox-tests="$SRC/equinox/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 240 15 tests -- --deselect tests/test_onnx.py > "$RUNS/equinox2.log" 2>&1
  $REC --out "$RUNS/diffrax2" --cwd "$SRC/diffrax" --timeout 200 \
    --root diffrax="$SRC/diffrax/diffrax" --root diffrax-tests="$SRC/diffrax/test" \
    --root lineax="$VSP/lineax" --root optimistix="$VSP/optimistix" --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 180 15 test > "$RUNS/diffrax2.log" 2>&1
fi
if want deepmind; then
  # the tests rlax, jraph, mctx, dm-pix and dynamax ship inside their installed packages
  # (pip install rlax jraph mctx dm-pix dynamax jax-md, pinned to the venv's jax), 20 s a file
  $REC --out "$RUNS/deepmind" --cwd "$VSP" --timeout 700 \
    --root rlax="$VSP/rlax" --root jraph="$VSP/jraph" --root mctx="$VSP/mctx" --root dm_pix="$VSP/dm_pix" \
    --root dynamax="$VSP/dynamax" --root distrax="$VSP/distrax" --root chex="$VSP/chex" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 660 20 rlax/_src jraph/_src mctx/_src dm_pix/_src dynamax > "$RUNS/deepmind.log" 2>&1
fi
if want haiku2; then
  # every haiku test file, 12 s each (not run for labels.jsonl: no time left)
  $REC --out "$RUNS/haiku2" --cwd "$SP" --timeout 330 --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 310 12 haiku/_src > "$RUNS/haiku2.log" 2>&1
fi
if want distrax2; then
  # every distrax and optax test file, 12 s each (for labels.jsonl only the optax half ran)
  $REC --out "$RUNS/distrax2" --cwd "$SRC/distrax" --timeout 230 \
    --root distrax="$SRC/distrax/distrax" --root chex="$VSP/chex" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 210 12 distrax > "$RUNS/distrax2.log" 2>&1
  $REC --out "$RUNS/optax2" --cwd "$SRC/optax" --timeout 230 --root optax="$SRC/optax/optax" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 210 12 optax > "$RUNS/optax2.log" 2>&1
fi
if want flax; then
  # more of flax (linen lifted transforms, pooling, cells, tabulate; nnx transforms, Optimizer, bridge)
  $REC --out "$RUNS/flax" --timeout 420 --root flax="$SP/flax" --root optax="$SRC/optax/optax" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_flax.py" 380 > "$RUNS/flax.log" 2>&1
fi
if want haiku3; then
  # more haiku modules and lifted transforms (drive_haiku.py)
  $REC --out "$RUNS/haiku3" --timeout 330 --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_haiku.py" 300 > "$RUNS/haiku3.log" 2>&1
fi
if want tfp; then
  # TensorFlow Probability's JAX substrate (tfp-nightly in the venv), drive_tfp.py in four runs
  TFP="$VSP/tensorflow_probability/substrates/jax"
  $REC --out "$RUNS/tfp" --timeout 600 --root tfp-jax="$TFP" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_tfp.py" 560 > "$RUNS/tfp.log" 2>&1
  $REC --out "$RUNS/tfp2" --timeout 450 --root tfp-jax="$TFP" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_tfp.py" 420 more > "$RUNS/tfp2.log" 2>&1
  $REC --out "$RUNS/tfp3" --timeout 330 --root tfp-jax="$TFP" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_tfp.py" 300 exp > "$RUNS/tfp3.log" 2>&1
  $REC --out "$RUNS/tfp4" --timeout 420 --root tfp-jax="$TFP" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_tfp.py" 390 wide > "$RUNS/tfp4.log" 2>&1
fi
if want jaxmd; then
  # jax-md 0.2.29's tests (checkout of tag jax-md-v0.2.29; they import the installed jax_md), 20 s a file
  $REC --out "$RUNS/jaxmd" --cwd "$SRC/jax-md" --timeout 560 \
    --root jax_md="$VSP/jax_md" --root jax-md-tests="$SRC/jax-md/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 520 20 tests > "$RUNS/jaxmd.log" 2>&1
fi
if want jaxmd2; then
  # the first case of each jax-md test function (drive_pytest.py --one-per-test), 60 s a file
  $REC --out "$RUNS/jaxmd2" --cwd "$SRC/jax-md" --timeout 760 \
    --root jax_md="$VSP/jax_md" --root jax-md-tests="$SRC/jax-md/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 720 60 tests/space_test.py tests/energy_test.py tests/partition_test.py \
      tests/smap_test.py tests/simulate_test.py tests/quantity_test.py tests/minimize_test.py tests/elasticity_test.py \
      tests/rigid_body_test.py tests/nn_test.py tests/custom_smap_test.py > "$RUNS/jaxmd2.log" 2>&1
  # the network models (NequIP, UMA, MACE) and the TPU code paths
  $REC --out "$RUNS/jaxmd3" --cwd "$SRC/jax-md" --timeout 400 \
    --root jax_md="$VSP/jax_md" --root jax-md-tests="$SRC/jax-md/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 370 90 tests/nequip_test.py tests/uma_test.py tests/mace_test.py \
      tests/tpu_test.py > "$RUNS/jaxmd3.log" 2>&1
fi
if want jaxcfd; then
  # jax-cfd's package and tests (a checkout; the tests import the checkout), 12 s a file
  $REC --out "$RUNS/jaxcfd" --cwd "$SRC/jax-cfd" --timeout 400 \
    --root jax_cfd="$SRC/jax-cfd/jax_cfd" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" 370 12 jax_cfd/base jax_cfd/collocated jax_cfd/spectral > "$RUNS/jaxcfd.log" 2>&1
fi
if want jaxcfd2; then
  # the first case of each jax-cfd test function, every test directory, 40 s a file
  $REC --out "$RUNS/jaxcfd2" --cwd "$SRC/jax-cfd" --timeout 900 \
    --root jax_cfd="$SRC/jax-cfd/jax_cfd" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 860 40 jax_cfd/base jax_cfd/collocated jax_cfd/spectral jax_cfd/ml \
      > "$RUNS/jaxcfd2.log" 2>&1
fi
if want jaxopt2; then
  # the first case of each jaxopt test function, every test file, 25 s a file
  $REC --out "$RUNS/jaxopt2" --cwd "$SRC/jaxopt" --timeout 900 \
    --root jaxopt="$VSP/jaxopt" --root jaxopt-tests="$SRC/jaxopt/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 860 25 tests > "$RUNS/jaxopt2.log" 2>&1
fi
if want optax3; then
  # the first case of each optax test function, every test file, 20 s a file
  $REC --out "$RUNS/optax3" --cwd "$SRC/optax" --timeout 900 --root optax="$SRC/optax/optax" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 860 20 optax > "$RUNS/optax3.log" 2>&1
fi
if want haiku4; then
  # the first case of each haiku test function, every test file, 20 s a file
  $REC --out "$RUNS/haiku4" --cwd "$SP" --timeout 900 --root haiku="$SP/haiku" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 860 20 haiku/_src > "$RUNS/haiku4.log" 2>&1
fi
if want optimistix2; then
  # lineax's and optimistix's suites ran out of time above: the first case of each test function,
  # every test file, 30 s a file
  $REC --out "$RUNS/optimistix2" --cwd "$SRC/optimistix" --timeout 480 \
    --root optimistix="$VSP/optimistix" --root optimistix-tests="$SRC/optimistix/tests" --root lineax="$VSP/lineax" \
    --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 450 30 tests > "$RUNS/optimistix2.log" 2>&1
  $REC --out "$RUNS/lineax2" --cwd "$SRC/lineax" --timeout 480 \
    --root lineax="$VSP/lineax" --root lineax-tests="$SRC/lineax/tests" --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 450 25 tests > "$RUNS/lineax2.log" 2>&1
fi
if want numerics; then
  # ott-jax 0.6.0, interpax, quadax and jaxlie 1.5.0 (pip install ott-jax interpax quadax jaxlie with the
  # constraints file) driven by their own tests (checkouts of those versions' tests/, or HEAD where the
  # snapshot has no tag of the installed version): the first case of each test function, 30 s a file
  for lib in ott:ott interpax:interpax quadax:quadax jaxlie:jaxlie; do
    name=${lib%%:*}; pkg=${lib##*:}
    $REC --out "$RUNS/$name" --cwd "$SRC/$name" --timeout 460 \
      --root "$pkg=$VSP/$pkg" --root "$name-tests=$SRC/$name/tests" --root jax="$SP/jax" -- \
      $PY "$HERE/drive_pytest.py" --one-per-test 420 30 tests > "$RUNS/$name.log" 2>&1
  done
fi
if want numerics2; then
  # e3nn-jax 0.21.0 (its loops over irreps), evosax 0.3.2 and sympy2jax (pip install e3nn-jax evosax
  # sympy2jax with the constraints file; tests/ of the 0.21.0 tag, of HEAD for the other two), and
  # equinox's own tests again (all files, first case of each test function), 30 s a file
  for lib in e3nn:e3nn_jax evosax:evosax sympy2jax:sympy2jax; do
    name=${lib%%:*}; pkg=${lib##*:}
    $REC --out "$RUNS/$name" --cwd "$SRC/$name" --timeout 400 \
      --root "$pkg=$VSP/$pkg" --root "$name-tests=$SRC/$name/tests" --root jax="$SP/jax" -- \
      $PY "$HERE/drive_pytest.py" --one-per-test 360 30 tests > "$RUNS/$name.log" 2>&1
  done
  $REC --out "$RUNS/equinox3" --cwd "$SRC/equinox" --timeout 560 \
    --root equinox="$SP/equinox" --root equinox-tests="$SRC/equinox/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 520 30 tests -- --deselect tests/test_onnx.py > "$RUNS/equinox3.log" 2>&1
fi
if want diffrax3; then
  # diffrax 0.7.2's tests (the checkout; they import it, so it is the measured root), the first case
  # of each test function, 20 s a file (the run labels.jsonl holds; `equinox2` ran whole files)
  $REC --out "$RUNS/diffrax2" --cwd "$SRC/diffrax" --timeout 330 \
    --root diffrax="$SRC/diffrax/diffrax" --root diffrax-tests="$SRC/diffrax/test" \
    --root lineax="$VSP/lineax" --root optimistix="$VSP/optimistix" --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 300 20 test > "$RUNS/diffrax2.log" 2>&1
fi
if want numpyro3; then
  # every numpyro test file, the first case of each test function (the earlier numpyro stages ran
  # whole files, which spend their time on one function's parametrizations), 30 s a file
  $REC --out "$RUNS/numpyro3" --cwd "$SRC/numpyro" --timeout 960 \
    --root numpyro="$VSP/numpyro" --root numpyro-tests="$SRC/numpyro/test" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 900 30 test > "$RUNS/numpyro3.log" 2>&1
  # the files the first pass (name order, time-limited) did not reach
  $REC --out "$RUNS/numpyro4" --cwd "$SRC/numpyro" --timeout 660 \
    --root numpyro="$VSP/numpyro" --root numpyro-tests="$SRC/numpyro/test" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 600 30 test/infer/test_ensemble_util.py test/infer/test_external_helpers.py test/infer/test_gradient.py test/infer/test_hmc_gibbs.py test/infer/test_hmc_util.py test/infer/test_importance.py test/infer/test_infer_util.py test/infer/test_inspect.py test/infer/test_mcmc.py test/infer/test_reparam.py test/infer/test_svi.py test/ops/test_indexing.py test/ops/test_provenance.py test/pyroapi/test_pyroapi.py test/test_compile.py test/test_constraints.py test/test_diagnostics.py test/test_distributions.py test/test_distributions_mixture.py test/test_distributions_util.py test/test_example_utils.py test/test_examples.py test/test_flows.py test/test_gof.py test/test_handlers.py test/test_model_rendering.py test/test_nn.py test/test_optimizers.py test/test_pickle.py test/test_transforms.py test/test_util.py  > "$RUNS/numpyro4.log" 2>&1
fi
if want samplers; then
  # blackjax 1.7.1's tests (tests/ of its sdist: pip download --no-binary :all: --no-deps blackjax==1.7.1;
  # the samplers' directories first, adaptation last) and dynamax's tests (they need dm-tree), which ship in the package (the `deepmind` stage gave them 20 s a file; its
  # HMM and SSM fits need longer), the first case of each test function
  $REC --out "$RUNS/blackjax" --cwd "$SRC/blackjax" --timeout 660 \
    --root blackjax="$VSP/blackjax" --root blackjax-tests="$SRC/blackjax/tests" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 600 40 tests/mcmc tests/smc tests/sgmcmc tests/vi tests/optimizers \
      tests/test_util.py tests/test_compilation.py tests/adaptation > "$RUNS/blackjax.log" 2>&1
  $REC --out "$RUNS/dynamax" --cwd "$VSP" --timeout 660 \
    --root dynamax="$VSP/dynamax" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 600 60 dynamax > "$RUNS/dynamax.log" 2>&1
fi
if want flows; then
  # flowjax 19.1.2 and tinygp 0.3.1 (pip install --no-deps flowjax==19.1.2 tinygp==0.3.1 paramax, with
  # the constraints file), by the tests/ of their sdists, the first case of each test function
  # (flowjax's tests import the checkout's flowjax/, which `python -m pytest` puts on the path first;
  # tinygp's sit under src/, so its tests import the installed one)
  for lib in flowjax:$SRC/flowjax/flowjax tinygp:$VSP/tinygp; do
    name=${lib%%:*}; pkgdir=${lib#*:}
    $REC --out "$RUNS/$name" --cwd "$SRC/$name" --timeout 560 \
      --root "$name=$pkgdir" --root "$name-tests=$SRC/$name/tests" --root equinox="$SP/equinox" --root jax="$SP/jax" -- \
      $PY "$HERE/drive_pytest.py" --one-per-test 500 30 tests > "$RUNS/$name.log" 2>&1
  done
fi
if want physics; then
  # MuJoCo MJX's tests, which ship in mujoco-mjx (pip install mujoco-mjx pgx with the constraints
  # file), the first case of each test function, 30 s a file; then every pgx game under jit
  $REC --out "$RUNS/mjx" --cwd "$VSP" --timeout 660 --root mjx="$VSP/mujoco/mjx" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_pytest.py" --one-per-test 600 30 mujoco/mjx/_src > "$RUNS/mjx.log" 2>&1
  $REC --out "$RUNS/pgx" --timeout 560 --root pgx="$VSP/pgx" --root jax="$SP/jax" -- \
    $PY "$HERE/drive_libs.py" 500 pgx_sweep > "$RUNS/pgx.log" 2>&1
fi
$PY "$HERE/record.py" merge "$RUNS"/*/ -o "$RUNS/merged.jsonl"

"""JAX multi-process on gangway's variables: a global sum over every device."""
import os

import jax
import jax.numpy as jnp

jax.distributed.initialize(
    coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],  # gangway: PRIMARY_ADDR:PRIMARY_PORT
    num_processes=int(os.environ["WORLD_SIZE"]),
    process_id=int(os.environ["RANK"]),
    local_device_ids=[int(os.environ["LOCAL_RANK"])])
total = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(jnp.ones(jax.local_device_count()))
print(f"jax: process {jax.process_index()} of {jax.process_count()}, {jax.device_count()} devices, psum {total[0]}")

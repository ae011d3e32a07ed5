"""Config providers (KIP-297, KIP-421): Kafka's built-in providers and the transformer.

=================================  ==============================================
Kafka class                        here
=================================  ==============================================
``...provider.FileConfigProvider``       :mod:`.file`
``...provider.DirectoryConfigProvider``  :mod:`.directory`
``...provider.EnvVarConfigProvider``     :mod:`.env_var`
``common.config.ConfigTransformer``      :mod:`.transformer`
``connect...WorkerConfigTransformer``    :mod:`.worker`
=================================  ==============================================

The provider API (``ConfigProvider``, ``ConfigData``) is :mod:`sparkcat.api.config_provider`.
"""

from sparkcat.runtime.config_provider.transformer import (
    VARIABLE_PATTERN,
    ConfigTransformer,
    TransformResult,
    keys_with_variables,
    reverse_transform,
)
from sparkcat.runtime.config_provider.worker import (
    WorkerConfigTransformer,
    resolve,
    resolve_worker,
    scrubber,
    transform,
)

__all__ = [
    "VARIABLE_PATTERN",
    "ConfigTransformer",
    "TransformResult",
    "WorkerConfigTransformer",
    "keys_with_variables",
    "resolve",
    "resolve_worker",
    "reverse_transform",
    "scrubber",
    "transform",
]

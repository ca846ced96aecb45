"""Every command's inputs, read through one entry point: ``Inputs``.

Scenario, timeline, verify and case documents; manifests from files, directories and standard
input (Lists, multi-document YAML, JSON); cluster dumps (``kubectl get -o yaml|json``) and live
clusters. The CLI builds one ``Inputs`` from its options and asks it for the document its
command runs on; the YAML and JSON are read by ``api.loader`` and the formats parsed where they
are defined. Layering: this package may import ``api``, ``cluster``, ``simulator``,
``analysis`` and ``conformance``; none of them imports it.
"""

from __future__ import annotations

from topospread.inputs.cluster import ClusterSource
from topospread.inputs.documents import Inputs, kept_for_the_run
from topospread.inputs.manifests import case_files, read_manifests

__all__ = ["ClusterSource", "Inputs", "case_files", "kept_for_the_run", "read_manifests"]

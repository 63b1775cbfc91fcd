# CPack: one Debian package per install component (packaging/CMakeLists.txt
# says what each holds). scripts/package runs cpack in a release build.
# Shared-library Depends come from dpkg-shlibdeps over the installed binaries.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardscope)
set(CPACK_PACKAGE_VENDOR "ShardScope")
set(CPACK_PACKAGE_CONTACT "ShardScope maintainers <maintainers@example.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Every package's Debian short description (CMake 3.25 prepends it to each component's own text).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PROJECT_HOMEPAGE_URL}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
set(full_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(components cli)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME shardscope-cli)
set(CPACK_DEBIAN_CLI_DESCRIPTION "ShardScope command line: plan, profile and export sparse parallelism
shardscope-cli plans 2D sparse parallelism (sharding group M x replicas R)
of DLRM-style models, prices TorchRec plans, runs the embedded training
engine (shardscope-engine, in-process or under mpirun/srun) to measure
per-GPU embedding load, imports PyTorch-profiler, Nsight and NCCL traces,
calibrates the cost model and drives a remote shardscope-agent.")
# MPI runs of the engine need mpirun; the NCCL profiler plugin (no CUDA in it) is for a trainer's NCCL.
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "libnccl2")
if(SHARDSCOPE_HAVE_CUDA)
  # The GPU engine links the CUDA runtime, CUPTI and NCCL (preset package-cuda): they are NVIDIA's
  # packages (its CUDA apt repository), not Debian's, so dpkg-shlibdeps skips them and they are
  # named here. The default packages (preset package) are built without them and run anywhere.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CUDAToolkit_LIBRARY_DIR}")
  set(cuda_suffix "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
  set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "cuda-cudart-${cuda_suffix}, cuda-cupti-${cuda_suffix}, libnccl2")
endif()

if(TARGET shardscope)
  list(APPEND components desktop)
  set(CPACK_DEBIAN_DESKTOP_PACKAGE_NAME shardscope)
  set(CPACK_DEBIAN_DESKTOP_PACKAGE_RECOMMENDS "shardscope-cli (= ${full_version})")
  set(CPACK_DEBIAN_DESKTOP_DESCRIPTION "ShardScope workbench: size and shard recommendation-model training
A Qt desktop application for two-dimensional sparse parallelism of
DLRM-style models: sweep every grid (M, R) with the predicted step time by
phase, memory per GPU and load imbalance, measure runs on the CPU or GPUs,
compare measured with predicted, calibrate, and export the shard plan for
TorchRec's DMPCollection or ShardScope's engine.")
endif()

if(TARGET shardscope-agent)
  list(APPEND components agent)
  set(CPACK_DEBIAN_AGENT_PACKAGE_NAME shardscope-agent)
  set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "shardscope-cli (= ${full_version}), adduser")
  set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
      ${PROJECT_SOURCE_DIR}/packaging/agent/postinst ${PROJECT_SOURCE_DIR}/packaging/agent/prerm
      ${PROJECT_SOURCE_DIR}/packaging/agent/postrm ${PROJECT_SOURCE_DIR}/packaging/agent/conffiles)
  set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
  set(CPACK_DEBIAN_AGENT_DESCRIPTION "ShardScope agent: engine runs on a cluster for remote clients
shardscope-agent serves ShardScope's desktop and shardscope-cli over TLS on
a cluster's login or GPU node: it describes the cluster, runs engine jobs
within configured limits (directly, under mpirun, srun or sbatch), streams
their progress and hands out their runs. Installed with a hardened systemd
unit, a loopback-only default config and a token; nothing is started until
the operator enables the service.")
endif()
set(CPACK_COMPONENTS_ALL ${components})
include(CPack)

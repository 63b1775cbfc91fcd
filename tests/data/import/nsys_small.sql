-- A small Nsight Systems SQLite export (the tables and columns of
-- `nsys export --type sqlite`, nsys 2023-2024), one process, two profiler
-- steps: an FBGEMM forward, an all-to-all (NCCL SendRecv), an FBGEMM backward,
-- then an all-reduce and a GEMM. Rows are inserted out of start order on
-- purpose. Name columns are nullable here so tests can insert NULL names.
-- globalTid 20703085778 = pid 1234 << 24 | tid 1234.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER, shortName INTEGER, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);

INSERT INTO StringIds VALUES
  (1, 'void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float, 32>(at::PackedTensorAccessor64<float, 1, at::RestrictPtrTraits>)'),
  (2, 'split_embedding_codegen_forward_unweighted_kernel'),
  (3, 'void fbgemm_gpu::split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float>(int)'),
  (4, 'split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1'),
  (5, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
  (6, 'ncclDevKernel_SendRecv'),
  (7, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (8, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (9, 'cudaLaunchKernel_v7000'),
  (10, 'cudaMemcpyAsync_v3020'),
  (11, 'ProfilerStep#1'),
  (12, 'ampere_sgemm_128x64_nn');

INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1733190000000000000, '2024-12-03T01:40:00Z', '2024-12-03T02:40:00');

-- kernels, latest first
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
  demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,
  dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES
  (6200, 7000, 0, 1, 7, 7, 20703084544, 12, 12, 128, 64, 1, 1, 256, 1, 1, 0, 0, 0, 0, 7),
  (5200, 6000, 0, 1, 13, 6, 20703084544, 7, 8, 96, 2, 1, 1, 640, 1, 1, 0, 0, 0, 0, 6),
  (3200, 4000, 0, 1, 7, 4, 20703084544, 3, 4, 64, 512, 1, 1, 256, 1, 1, 0, 0, 0, 0, 4),
  (2200, 3000, 0, 1, 13, 3, 20703084544, 5, 6, 96, 8, 1, 1, 640, 1, 1, 0, 0, 0, 0, 3),
  (1200, 1800, 0, 1, 7, 1, 20703084544, 1, 2, 64, 1024, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1);

INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES
  (6100, 6150, 1, 20703085778, 7, 9, 0),
  (5100, 5150, 1, 20703085778, 6, 9, 0),
  (3100, 3150, 1, 20703085778, 4, 9, 0),
  (2100, 2150, 1, 20703085778, 3, 9, 0),
  (1160, 1190, 1, 20703085778, 2, 10, 0),
  (1100, 1150, 1, 20703085778, 1, 9, 0);

INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes,
  copyKind, srcKind, dstKind) VALUES (1900, 2000, 0, 1, 7, 2, 20703084544, 65536, 1, 0, 2);

INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value,
  bytes, memKind) VALUES (4100, 4200, 0, 1, 7, 5, 20703084544, 0, 4096, 2);

-- NVTX: push/pop ranges (eventType 59), one with its text in StringIds, and a mark (34, no end).
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId) VALUES
  (7500, NULL, 34, 'checkpoint', 20703085778, NULL, NULL, 0),
  (5000, 9000, 59, NULL, 20703085778, NULL, 11, 0),
  (2150, 2900, 59, '## PooledEmbeddingsAwaitable wait() ##', 20703085778, NULL, NULL, 0),
  (1000, 5000, 59, 'ProfilerStep#0', 20703085778, NULL, NULL, 0);

// Which CUPTI record struct versions this build reads, chosen by the headers'
// CUPTI_API_VERSION. New versions only append fields, so reading an older
// library's records through the leading fields is safe; the runtime version
// is still checked (cupti_source.cpp) and stored in the capture.
#pragma once

#include <cupti.h>

namespace osc::agent::cupti {

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemcpyPtoPRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
using SyncRecord = CUpti_ActivitySynchronization2;
using MarkerRecord = CUpti_ActivityMarker2;
using MarkerDataRecord = CUpti_ActivityMarkerData2;
using OverheadRecord = CUpti_ActivityOverhead3;
using CudaEventRecord = CUpti_ActivityCudaEvent2;  // adds deviceId, deviceTimestamp, cudaEventSyncId
using DeviceRecord = CUpti_ActivityDevice5;        // 13.2's Device6 only appends fields
#elif CUPTI_API_VERSION >= 18                      // CUDA 12.x
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using MemcpyPtoPRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
using SyncRecord = CUpti_ActivitySynchronization;
using MarkerRecord = CUpti_ActivityMarker2;
using MarkerDataRecord = CUpti_ActivityMarkerData;
using OverheadRecord = CUpti_ActivityOverhead;
using CudaEventRecord = CUpti_ActivityCudaEvent;
using DeviceRecord = CUpti_ActivityDevice5;
#else
#error "overlapscope needs the CUPTI headers of CUDA 12 or newer"
#endif
using ApiRecord = CUpti_ActivityAPI;
using NameRecord = CUpti_ActivityName;

}  // namespace osc::agent::cupti

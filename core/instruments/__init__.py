"""How the machine is read: NVML (the GPU's clocks, power and throttle
state, and the manifest's GPU entry), CUPTI (device activity recorded and read
into a device profile and a work account), the stream hold that queues a batch
of event-timed samples whole, the device-wide sync check, where the CUDA tools
are, and the manifest of what a result was measured on.

Instruments read; they do not judge a kernel. They sit below the workers
because a worker's results carry their readings.
"""

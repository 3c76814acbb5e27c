/* qboot/mptable.c — the Intel MultiProcessor Specification 1.4 table: how
 * a kernel on microvm without ACPI learns of more than one CPU and of the
 * I/O APIC.  Built for one CPU too: without it Linux runs on the PIC in
 * virtual wire mode and its early boot under TCG measured ~80 ms slower
 * (vmm_firmware 225 against 146 ms, medians of 12, docs/BENCHMARKS.md);
 * qboot.rom builds one always.  The CPUs' local
 * APIC IDs are taken as 0..n-1 (QEMU's for a plain -smp N, which is what
 * qpod gives); the ISA bus's IRQs 0-15 go to the I/O APIC's pins of the
 * same number, but IRQ 0 (the PIT) to pin 2, as QEMU wires it; LINT0 is
 * ExtINT (the PIC's), LINT1 the NMI.  The table lives in the last KiB of
 * base memory, which the e820 map reserves (boot.c), where Linux looks. */
#include "boot.h"
#include "lib.h"

#define MP_FLOATING_SIGNATURE "_MP_"
#define MP_CONFIG_SIGNATURE "PCMP"
#define MP_SPEC_REV 4             /* version 1.4 */
#define MP_FLOATING_LENGTH 1      /* in 16-byte units */

#define MP_ENTRY_CPU 0
#define MP_ENTRY_BUS 1
#define MP_ENTRY_IOAPIC 2
#define MP_ENTRY_IOINT 3
#define MP_ENTRY_LINT 4

#define MP_CPU_ENABLED 0x01
#define MP_CPU_BSP 0x02
#define MP_IOAPIC_ENABLED 0x01
#define MP_INT_TYPE_INT 0
#define MP_INT_TYPE_NMI 1
#define MP_INT_TYPE_EXTINT 3
#define MP_INT_FLAGS_BUS_DEFAULT 0 /* polarity and trigger as the bus says */
#define MP_LAPIC_ALL 0xff

#define LAPIC_ADDR 0xfee00000
#define LAPIC_VERSION 0x14
#define IOAPIC_ADDR 0xfec00000
#define IOAPIC_VERSION 0x11
#define ISA_IRQS 16
#define PIT_IRQ 0
#define PIT_IOAPIC_PIN 2


struct mp_floating {
	char signature[4];
	uint32_t config_addr;
	uint8_t length;
	uint8_t spec_rev;
	uint8_t checksum;
	uint8_t features[5];      /* all 0: a configuration table follows */
} __attribute__((packed));

struct mp_config {
	char signature[4];
	uint16_t length;
	uint8_t spec_rev;
	uint8_t checksum;
	char oem_id[8];
	char product_id[12];
	uint32_t oem_table;
	uint16_t oem_table_size;
	uint16_t entries;
	uint32_t lapic_addr;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

struct mp_cpu {
	uint8_t type, lapic_id, lapic_version, flags;
	uint32_t signature, features;
	uint32_t reserved[2];
} __attribute__((packed));

struct mp_bus {
	uint8_t type, bus_id;
	char bus_type[6];
} __attribute__((packed));

struct mp_ioapic {
	uint8_t type, id, version, flags;
	uint32_t addr;
} __attribute__((packed));

struct mp_int {
	uint8_t type, int_type;
	uint16_t flags;
	uint8_t src_bus, src_irq, dst_id, dst_pin;
} __attribute__((packed));

/* the floating pointer and the configuration table's header, then its
 * entries: a CPU each, the bus, the I/O APIC, the ISA IRQs, LINT0/1 */
struct mp_table {
	struct mp_floating floating;
	struct mp_config config;
	uint8_t entries[];
} __attribute__((packed));
#define MP_ENTRIES_SIZE(ncpus) \
	((ncpus) * sizeof(struct mp_cpu) + sizeof(struct mp_bus) + sizeof(struct mp_ioapic) + \
	 (ISA_IRQS + 2) * sizeof(struct mp_int))

static uint8_t checksum(const void *p, uint32_t n)
{
	const uint8_t *b = p;
	uint8_t sum = 0;
	while (n--)
		sum += *b++;
	return (uint8_t)-sum;
}

static void cpuid1(uint32_t *signature, uint32_t *features)
{
	uint32_t b, c;
	__asm__ volatile("cpuid" : "=a"(*signature), "=b"(b), "=c"(c), "=d"(*features) : "a"(1));
}

static uint8_t *put(uint8_t *p, const void *entry, uint32_t size, uint16_t *entries)
{
	memcpy(p, entry, size);
	(*entries)++;
	return p + size;
}

void mptable_build(struct boot *b)
{
	uint16_t ncpus = 0;
	struct mp_table *t = (struct mp_table *)MPTABLE_ADDR;
	uint32_t signature, features;

	fw_cfg_read(&b->cfg, FW_CFG_NB_CPUS, &ncpus, sizeof(ncpus));
	if (ncpus < 1)
		fw_fail("fw_cfg: %u CPUs", ncpus);
	uint32_t size = sizeof(*t) + MP_ENTRIES_SIZE(ncpus);
	if (size > MPTABLE_SIZE)
		fw_fail("%u CPUs: their MP table would take %u bytes, more than the %u of its place", ncpus, size,
			(uint32_t)MPTABLE_SIZE);
	cpuid1(&signature, &features);
	memset(t, 0, size);
	memcpy(t->config.signature, MP_CONFIG_SIGNATURE, 4);
	t->config.spec_rev = MP_SPEC_REV;
	memcpy(t->config.oem_id, "QPOD    ", 8);
	memcpy(t->config.product_id, "MICROVM     ", 12);
	t->config.lapic_addr = LAPIC_ADDR;

	uint8_t *p = t->entries;
	uint16_t entries = 0;
	for (uint16_t i = 0; i < ncpus; i++) {
		struct mp_cpu c = { MP_ENTRY_CPU, (uint8_t)i, LAPIC_VERSION, MP_CPU_ENABLED | (i ? 0 : MP_CPU_BSP),
				    signature, features, { 0, 0 } };
		p = put(p, &c, sizeof(c), &entries);
	}
	struct mp_bus bus = { MP_ENTRY_BUS, 0, { 'I', 'S', 'A', ' ', ' ', ' ' } };
	p = put(p, &bus, sizeof(bus), &entries);
	uint8_t ioapic_id = (uint8_t)ncpus;
	struct mp_ioapic io = { MP_ENTRY_IOAPIC, ioapic_id, IOAPIC_VERSION, MP_IOAPIC_ENABLED, IOAPIC_ADDR };
	p = put(p, &io, sizeof(io), &entries);
	for (uint8_t irq = 0; irq < ISA_IRQS; irq++) {
		struct mp_int in = { MP_ENTRY_IOINT, MP_INT_TYPE_INT, MP_INT_FLAGS_BUS_DEFAULT, 0, irq, ioapic_id,
				     irq == PIT_IRQ ? PIT_IOAPIC_PIN : irq };
		p = put(p, &in, sizeof(in), &entries);
	}
	struct mp_int lint0 = { MP_ENTRY_LINT, MP_INT_TYPE_EXTINT, MP_INT_FLAGS_BUS_DEFAULT, 0, 0, MP_LAPIC_ALL, 0 };
	struct mp_int lint1 = { MP_ENTRY_LINT, MP_INT_TYPE_NMI, MP_INT_FLAGS_BUS_DEFAULT, 0, 0, MP_LAPIC_ALL, 1 };
	p = put(p, &lint0, sizeof(lint0), &entries);
	p = put(p, &lint1, sizeof(lint1), &entries);
	t->config.entries = entries;
	t->config.length = (uint16_t)(p - (uint8_t *)&t->config);
	t->config.checksum = checksum(&t->config, t->config.length);

	memcpy(t->floating.signature, MP_FLOATING_SIGNATURE, 4);
	t->floating.config_addr = (uint32_t)&t->config;
	t->floating.length = MP_FLOATING_LENGTH;
	t->floating.spec_rev = MP_SPEC_REV;
	t->floating.checksum = checksum(&t->floating, sizeof(t->floating));
}

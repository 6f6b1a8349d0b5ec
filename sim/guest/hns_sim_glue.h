/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The C half of hns_sim.ko; called from hns_sim_main.rs. */
#ifndef HNS_SIM_GLUE_H
#define HNS_SIM_GLUE_H

struct pci_dev;

int hns_sim_glue_init(void);
void hns_sim_glue_exit(void);
/* Bytes the Rust side reserves for the struct hnae3_ae_dev (checked). */
#define HNS_SIM_AE_DEV_SPACE 2048

int hns_sim_glue_attach(struct pci_dev *pdev, void *ae_dev_space,
			unsigned int num_vectors);
void hns_sim_glue_detach(struct pci_dev *pdev);

#endif

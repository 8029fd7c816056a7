// SPDX-License-Identifier: Apache-2.0

// Package cnp runs the ClusterNetworkPolicy conformance suite of sigs.k8s.io/network-policy-api
// (its tests, suite and flags packages, so the command line is the suite's own) against the
// cluster in KUBECONFIG and writes its ConformanceReport, as the module's profile test does.
// hack/kind/build-bins.sh builds it in a generated module; hack/kind.sh cnp runs it.
//
// One difference, only on a kernel without SCTP sockets (these machines'; the kind nodes share
// the host's kernel): the suite's SCTP servers (agnhost porter) exit when they can't listen, so
// its pods never turn Ready and no test would run. There the base manifests come with those
// containers running agnhost pause instead (base/manifests-no-sctp.yaml, made by the build),
// and the tests that connect over SCTP go in the suite's skip list, which its report records
// as skipped, by name. (Skipping with go test -skip or t.Skip would be reported as passed.)
package cnp

import (
	"embed"
	"errors"
	"os"
	"syscall"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/yaml"

	api "sigs.k8s.io/network-policy-api/apis/v1beta1"
	"sigs.k8s.io/network-policy-api/conformance/tests"
	"sigs.k8s.io/network-policy-api/conformance/utils/flags"
	"sigs.k8s.io/network-policy-api/conformance/utils/suite"
)

// The suite's base/ folder (the module's, copied by the build) plus manifests-no-sctp.yaml.
//
//go:embed base
var manifests embed.FS

// The tests that connect over SCTP (agnhost connect --protocol=sctp) in v0.3.0: 10 standard,
// and the 2 experimental node-peer tests, whose deny case pokes an SCTP port.
var sctpTests = []string{
	"CNPAdminTierEgressSCTP", "CNPAdminTierIngressSCTP", "CNPAdminTierGress",
	"CNPAdminTierPortRange", "CNPAdminTierEgressInlineCIDRPeers",
	"CNPBaselineTierEgressSCTP", "CNPBaselineTierIngressSCTP", "CNPBaselineTierGress",
	"CNPBaselineTierPortRange", "CNPBaselineTierEgressInlineCIDRPeers",
	"CNPAdminTierEgressNodePeers", "CNPBaselineTierEgressNodePeers",
}

// kernelHasSCTP tells whether this kernel opens SCTP sockets at all.
func kernelHasSCTP(t *testing.T) bool {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_SCTP)
	if err == nil {
		syscall.Close(fd)
		return true
	}
	if !errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Fatalf("probing SCTP sockets: %v", err)
	}
	return false
}

func TestCNP(t *testing.T) {
	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	if err := api.Install(c.Scheme()); err != nil {
		t.Fatalf("ClusterNetworkPolicy scheme: %v", err)
	}
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatalf("CRD scheme: %v", err)
	}
	implementation, err := suite.ParseImplementation(*flags.ImplementationOrganization,
		*flags.ImplementationProject, *flags.ImplementationURL, *flags.ImplementationVersion,
		*flags.ImplementationContact, *flags.ImplementationAdditionalInformation)
	if err != nil {
		t.Fatalf("implementation: %v", err)
	}
	if *flags.ReportOutput == "" {
		t.Fatalf("-report-output FILE is required")
	}

	base, skip := "base/manifests.yaml", []string(nil)
	if !kernelHasSCTP(t) {
		base, skip = "base/manifests-no-sctp.yaml", sctpTests
		t.Logf("no SCTP sockets in this kernel (EPROTONOSUPPORT): SCTP servers replaced by "+
			"agnhost pause, skipping %v", skip)
	}
	cSuite, err := suite.NewConformanceProfileTestSuite(suite.ConformanceProfileOptions{
		Options: suite.Options{
			Client:                     c,
			ClientSet:                  clientset,
			KubeConfig:                 *cfg,
			Debug:                      *flags.ShowDebug,
			CleanupBaseResources:       *flags.CleanupBaseResources,
			SupportedFeatures:          suite.ParseSupportedFeatures(*flags.SupportedFeatures),
			ExemptFeatures:             suite.ParseSupportedFeatures(*flags.ExemptFeatures),
			EnableAllSupportedFeatures: *flags.EnableAllSupportedFeatures,
			BaseManifests:              base,
			SkipTests:                  skip,
			FS:                         &manifests,
		},
		Implementation:      *implementation,
		ConformanceProfiles: suite.ParseConformanceProfiles(*flags.ConformanceProfiles),
	})
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	cSuite.Setup(t)
	if err := cSuite.Run(t, tests.ConformanceTests); err != nil {
		t.Fatalf("run: %v", err)
	}
	report, err := cSuite.Report()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	raw, err := yaml.Marshal(report)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := os.WriteFile(*flags.ReportOutput, raw, 0o644); err != nil {
		t.Fatalf("report: %v", err)
	}
	t.Logf("conformance report (%s):\n%s", *flags.ReportOutput, raw)
}

"""The registry of data files: each one's publisher, URL, size, SHA-256 and licence."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DATASET_FILES", "SOURCES", "Source", "files_of"]


@dataclass(frozen=True)
class Source:
    """One data file as published: its ``path`` under the data directory, ``size``, ``sha256``,
    ``url`` (None: no public download) and ``member`` inside the archive there, ``origin``,
    ``licence``, ``note``, and for a gzip re-compressed by its publisher ``content_sha256``."""

    path: str
    size: int
    sha256: str
    url: str | None
    member: str | None
    origin: str
    licence: str
    note: str
    content_sha256: str | None = None


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
_GITHUB = "https://raw.githubusercontent.com/"
_UNCHECKED = "URL not checked from the development machine (no network there): a mismatch is refused"
_SNAPSHOT = "checked byte for byte against a stored snapshot of the publisher's copy"
_REGZIPPED = ("the publisher's .gz holds the same rows compressed differently: checked by the "
              "SHA-256 of its decompressed bytes; " + _UNCHECKED)
# (origin, licence) of each publisher
_ADULT = ("UCI Machine Learning Repository, Adult (Becker & Kohavi 1996)",
          "CC BY 4.0 (UCI Machine Learning Repository); cite Becker & Kohavi (1996), Adult, doi:10.24432/C5XW20")
_BANK = ("UCI Machine Learning Repository, Bank Marketing (Moro, Cortez & Rita 2014)",
         "CC BY 4.0 (UCI Machine Learning Repository); cite Moro, Cortez & Rita (2014), Decision Support Systems 62:22-31; doi:10.24432/C5K306")
_CENSUS = ("UCI Machine Learning Repository, Census-Income (KDD)",
           "CC BY 4.0 (UCI Machine Learning Repository); Census-Income (KDD), Lane & Kohavi, doi:10.24432/C5N30T")
_CRIME = ("UCI Machine Learning Repository, Communities and Crime (Redmond 2009)",
          "CC BY 4.0 (UCI Machine Learning Repository); cite Redmond (2009), Communities and Crime, doi:10.24432/C53W3X")
_COMPAS = ("ProPublica compas-analysis (Angwin et al. 2016)",
           "ProPublica compas-analysis repo has no LICENSE file; cite Angwin, Larson, Mattu & Kirchner, 'Machine Bias', ProPublica (2016)")
_CREDIT = ("UCI Machine Learning Repository, Default of Credit Card Clients (Yeh 2016)",
           "CC BY 4.0 (UCI Machine Learning Repository); cite Yeh & Lien (2009), doi:10.24432/C55S3H")
_FCE = ("the FCE authors' base-clustering pools",
        "Derived from public data sets; no licence stated; cite Zhou et al., 'Fair Clustering Ensemble With Equal Cluster Capacity', IEEE TPAMI 2024, doi:10.1109/TPAMI.2024.3507857")
_FFE = ("the FKR-F²E authors' (Okray, Hu & Lan 2019) published files",
        "Derived from UCI/ProPublica-Kaggle data by Univ. of Wyoming ML group (Chao Lan); no licence stated; cite Okray, Hu & Lan, 'Fair Kernel Regression via Fair Feature Embedding in Kernel Space', ICTAI 2019 (arXiv:1907.02242)")
_MNIST = ("MNIST (LeCun, Cortes & Burges)",
          "MNIST: LeCun, Cortes & Burges; yann.lecun.com states CC BY-SA 3.0")
_SAFAIRKM = ("the SAfairKM authors' (Liu & Vicente) preprocessed arrays",
             "Derived from UCI Adult/Bank (CC BY 4.0); repo states no licence; cite Liu & Vicente, 'A stochastic alternating balance k-means algorithm for fair clustering' (2021)")
_USPS = ("USPS digits, The Elements of Statistical Learning data",
         "USPS: courtesy AT&T / LeCun et al.; distributed with ESL (Hastie, Tibshirani & Friedman); no explicit licence")
_YALE = ("Yale faces 32 × 32 (Deng Cai's face data)",
         "Yale Face Database (research use); cite Deng Cai's data page and Belhumeur et al. 1997")

SOURCES: dict[str, Source] = {s.path: s for s in (
    Source("adult/adult.data", 3974305, "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
           _UCI + "adult/adult.data", None, *_ADULT, _UNCHECKED),
    Source("adult/adult.names", 5229, "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
           _UCI + "adult/adult.names", None, *_ADULT, _UNCHECKED),
    Source("adult/adult.test", 2003153, "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
           _UCI + "adult/adult.test", None, *_ADULT, _UNCHECKED),
    Source("bank_marketing/bank-additional-full.csv", 5834924, "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
           _UCI + "00222/bank-additional.zip", "bank-additional/bank-additional-full.csv", *_BANK, _UNCHECKED),
    Source("bank_marketing/bank-additional-names.txt", 5458, "10045462a4c026f858dffa159370c4270510230c1fc63c6c91ca51bba4b3df26",
           _UCI + "00222/bank-additional.zip", "bank-additional/bank-additional-names.txt", *_BANK, _UNCHECKED),
    Source("census_income_kdd/census_income_1994_1995_test.csv.gz", 2993062, "9d476164fbf1fdb9c79af8e567da35102f9309dbc1111740a63c07a437b0f034",
           _UCI + "census-income-mld/census-income.test.gz", None, *_CENSUS, _REGZIPPED, "98402b1ab879573d0a7f38a699a40258080e25e33d3401e7bf9c96d3fa0fab8c"),
    Source("census_income_kdd/census_income_1994_1995_train.csv.gz", 5988689, "3a8265c042a3a804761b804e3fbd2b44d26780fc11848cdc499a439b6ec209c2",
           _UCI + "census-income-mld/census-income.data.gz", None, *_CENSUS, _REGZIPPED, "3676a81db7d3528f3f8b9f3c699d0f0aa28db45e6e994fa0b8ed38327539ee86"),
    Source("communities_crime/communities.data", 1102815, "09e0b5c07eae24c1efab19b2edee05e160e7f5743b6f31e31eec3d73624da2ea",
           _UCI + "communities/communities.data", None, *_CRIME, _UNCHECKED),
    Source("communities_crime/communities.names", 27179, "80914f24ab37261fb0fbda7e417cad8001335dadda4a8d702c265601ef8434fc",
           _UCI + "communities/communities.names", None, *_CRIME, _UNCHECKED),
    Source("compas/compas-scores-two-years-violent.csv", 1603205, "918e218ba181d4db8a7266977d23ca7a5ecf1bc7d5defd7b2f27bf3cbd9763e3",
           _GITHUB + "propublica/compas-analysis/master/compas-scores-two-years-violent.csv", None, *_COMPAS, _SNAPSHOT),
    Source("compas/compas-scores-two-years.csv", 2546489, "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
           _GITHUB + "propublica/compas-analysis/master/compas-scores-two-years.csv", None, *_COMPAS, _SNAPSHOT),
    Source("compas/compas-scores.csv", 3554605, "c9864c9e48c0a9e32ab23f7ad05a454d7624a4625c2a54d4447921de544fd8a2",
           _GITHUB + "propublica/compas-analysis/master/compas-scores.csv", None, *_COMPAS, _SNAPSHOT),
    Source("credit_default/UCI_Credit_Card.csv", 2867194, "a34a76879a9733b67637c98df6acbbe627425954193c023fbe474b144a34659d",
           None, None, *_CREDIT, "Kaggle's copy (uciml/default-of-credit-card-clients-dataset, a login is needed) with the label column renamed next_payment; UCI publishes the same rows as an .xls (dataset 350)"),
    *(Source(f"fce_pools/bc_pool_{p}.mat", size, sha256, "https://doctor-nobody.github.io/codes/FCE.7z",
             f"FCE/FCE/data/bc_pool_{p}.mat", *_FCE, _SNAPSHOT) for p, size, sha256 in (
        ("ds", 250473, "a2fb40f9692acdcb74378e9095f3749ffd9debfbc687776f15ce18aef9aeac3c"),
        ("har", 316369, "b9bdadb3fa8432fb783e2918dd036b768bbbc3881bb8dfcb640ac012331d5a7b"),
        ("jaffe", 8771, "248adc8d44c6a193527d8697aa0e8eacb1cf839c156e063a714ff95cdcbeaf41"),
        ("mnist_usps", 288983, "1d8c10bbe633b60b1d78973be89a793d300dd85073ad0037a18c9e22efbdc29d"),
        ("reverse_mnist", 394766, "7702d396d2399e993b2cf488ff8f5e81044dab7f2b213a5b1162b9f4ce61d1d1"),
        ("yale", 17180, "fd0f6f5cd0a0bb3aad08fbdc54d61ef518833996816deeb4559e6da3016c50eb"),
    )),
    Source("ffe_splits/communitycrime/crimecommunity.csv", 945050, "e0fa2c8dad5e18a3cbfe9cf3dac558ff92989f06eb2ad31366166a2486a95786",
           _GITHUB + "uwyomachinelearning/datasets/master/communitycrime.zip", "communitycrime/crimecommunity.csv", *_FFE, _SNAPSHOT),
    Source("ffe_splits/communitycrime/crimecommunity_index.csv", 444893, "069b967151408b65fe3c5fd720fd2d992b44c0986ca65ce19a49c9c5ce391e13",
           _GITHUB + "uwyomachinelearning/datasets/master/communitycrime.zip", "communitycrime/crimecommunity_index.csv", *_FFE, _SNAPSHOT),
    Source("ffe_splits/compas/compas.zip", 1988997, "e8ec630a21cd422ac0600f4eac1b2e7ce152ac6f9ef106ef22934cff7f52f6a7",
           _GITHUB + "uwyomachinelearning/datasets/master/compas.zip", None, *_FFE, _SNAPSHOT),
    Source("ffe_splits/compaswebsitedata/compas.csv", 607441, "dc5f745165e38115ba549dcb8bfbf02e78d2646b049acce171a2e616ef7ca9bc",
           _GITHUB + "aokray/aokray.github.io/master/compaswebsitedata.zip", "compas.csv", *_FFE, _SNAPSHOT),
    Source("ffe_splits/compaswebsitedata/compas_index.csv", 3640575, "eb17ae89fcfbcf186f965c7845bd13efa9465b6384c5d5ac4bbe40a472c7b89b",
           _GITHUB + "aokray/aokray.github.io/master/compaswebsitedata.zip", "compas_index.csv", *_FFE, _SNAPSHOT),
    Source("ffe_splits/creditcarddefault/creditcarddefault.csv", 1819463, "df9ab069c0872f63c526874d03fef4408dcc123afb595ebf7d90dc02f85b2121",
           _GITHUB + "aokray/aokray.github.io/master/creditcarddefault.zip", "creditcarddefault.csv", *_FFE, _SNAPSHOT),
    Source("ffe_splits/creditcarddefault/creditdefault_index.csv", 4082980, "3ccd2ddfccb78ebe0ff0e56976f83020231b4c88c7d01038990c6adfd4bcf8b0",
           _GITHUB + "aokray/aokray.github.io/master/creditcarddefault.zip", "creditdefault_index.csv", *_FFE, _SNAPSHOT),
    Source("mnist/mnist_5k.csv.gz", 1106785, "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d",
           None, None, *_MNIST, "source unknown; no loader reads it"),
    Source("mnist/t10k-images-idx3-ubyte.gz", 1648877, "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b",
           "http://yann.lecun.com/exdb/mnist/t10k-images-idx3-ubyte.gz", None, *_MNIST, _UNCHECKED),
    Source("mnist/t10k-labels-idx1-ubyte.gz", 4542, "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c",
           "http://yann.lecun.com/exdb/mnist/t10k-labels-idx1-ubyte.gz", None, *_MNIST, _UNCHECKED),
    Source("mnist/train-labels-idx1-ubyte.gz", 28881, "ec02e7948609e5754d47881c09b8afdd8dfa60600b9e5388c8c54a67069ec772",
           "http://yann.lecun.com/exdb/mnist/train-labels-idx1-ubyte.gz", None, *_MNIST, _UNCHECKED),
    Source("safairkm/Adult.npz", 1563684, "5d96429f5a2feb9649614fd7d0ec199b0ac4705824fc15b889a545ad27bc7f3e",
           _GITHUB + "sul217/SAfairKM/master/data/Adult.npz", None, *_SAFAIRKM, _SNAPSHOT),
    Source("safairkm/Bank.npz", 2302804, "80845f586a5f22c5b67faee48b421c3e4796b77d955fed058fa3b7d7a7f56964",
           _GITHUB + "sul217/SAfairKM/master/data/Bank.npz", None, *_SAFAIRKM, _SNAPSHOT),
    Source("usps/zip.info.txt", 1174, "927ca750c4117b61a71def180d5e4f00f1323a4b2c9cd990f576aa8def3505f1",
           "https://hastie.su.domains/ElemStatLearn/datasets/zip.info.txt", None, *_USPS, _UNCHECKED),
    Source("usps/zip.test.gz", 439208, "8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",
           "https://hastie.su.domains/ElemStatLearn/datasets/zip.test.gz", None, *_USPS, _UNCHECKED),
    Source("usps/zip.train.gz", 1829071, "66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",
           "https://hastie.su.domains/ElemStatLearn/datasets/zip.train.gz", None, *_USPS, _UNCHECKED),
    Source("yale/Yale_32x32.mat", 161026, "beb3cc9f448c1ab786583c8f5429368c299843ee88263f9650ed463004ef7633",
           "http://www.cad.zju.edu.cn/home/dengcai/Data/Yale/Yale_32x32.mat", None, *_YALE, _UNCHECKED),
)}

#: The files each loader reads (a data set, an FCE pool, or MNIST-USPS's raw digits).
DATASET_FILES: dict[str, tuple[str, ...]] = {
    "adult": ("adult/adult.data",),
    "bank_marketing": ("bank_marketing/bank-additional-full.csv",),
    "census_income_kdd": ("census_income_kdd/census_income_1994_1995_train.csv.gz",),
    "communities_crime": ("communities_crime/communities.names",
                          "communities_crime/communities.data"),
    "compas": ("compas/compas-scores-two-years.csv",),
    "credit_default": ("credit_default/UCI_Credit_Card.csv",),
    "ffe_credit": ("ffe_splits/creditcarddefault/creditcarddefault.csv",
                   "ffe_splits/creditcarddefault/creditdefault_index.csv"),
    "ffe_crime": ("ffe_splits/communitycrime/crimecommunity.csv",
                  "ffe_splits/communitycrime/crimecommunity_index.csv"),
    "ffe_compas": ("ffe_splits/compas/compas.zip",),
    "safairkm_adult": ("safairkm/Adult.npz",),
    "safairkm_bank": ("safairkm/Bank.npz",),
    **{f"pool_{p}": (f"fce_pools/bc_pool_{p}.mat",)
       for p in ("ds", "har", "mnist_usps", "reverse_mnist", "jaffe", "yale")},
    "mnist_usps_digits": ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz",
                          "usps/zip.train.gz"),
}


def files_of(name: str) -> tuple[str, ...]:
    """The files (relative paths) of a data set, an FCE pool (``"har"`` or ``"pool_har"``), or
    ``"all"``; ValueError for an unknown ``name``."""
    if name == "all":
        return tuple(SOURCES)
    key = name if name in DATASET_FILES else f"pool_{name}"
    if key not in DATASET_FILES:
        raise ValueError(f"unknown data set {name!r}; choose one of "
                         f"{sorted(n.removeprefix('pool_') for n in DATASET_FILES)} or 'all'.")
    return DATASET_FILES[key]
